//! Codex's `thread/turns/list`: a thread's turns a page at a time, newest first by default,
//! each with the items its `itemsView` asks for (`summary` by default: the final agent
//! message). Cursors are opaque to the client: `after:<turnId>` continues past that turn in
//! the page's direction; `from:<turnId>` (the `backwardsCursor`) starts at that turn, so the
//! opposite direction includes the anchor again.

use crate::hub::Hub;
use troupe_app_server_protocol::protocol::{
    SortDirection, ThreadTurnsListParams, ThreadTurnsListResponse, Turn, TurnItemsView,
};

pub async fn turns_list(
    hub: &Hub,
    params: ThreadTurnsListParams,
) -> Result<ThreadTurnsListResponse, String> {
    let summary = hub
        .summary(&params.thread_id)
        .map_err(|err| err.to_string())?;
    let turns = hub.wire_thread(&summary, true).await.turns;
    page(turns, &params)
}

/// One page of `turns` (oldest first, as a thread holds them).
pub fn page(
    mut turns: Vec<Turn>,
    params: &ThreadTurnsListParams,
) -> Result<ThreadTurnsListResponse, String> {
    if params.sort_direction.unwrap_or(SortDirection::Desc) == SortDirection::Desc {
        turns.reverse();
    }
    let start = match params.cursor.as_deref() {
        None => 0,
        Some(cursor) => {
            let (inclusive, id) = if let Some(id) = cursor.strip_prefix("after:") {
                (false, id)
            } else if let Some(id) = cursor.strip_prefix("from:") {
                (true, id)
            } else {
                return Err(format!("Invalid request: invalid cursor `{cursor}`"));
            };
            let at = turns.iter().position(|turn| turn.id == id).ok_or_else(|| {
                format!("Invalid request: cursor `{cursor}` names no turn of this thread")
            })?;
            if inclusive {
                at
            } else {
                at + 1
            }
        }
    };
    let limit = params.limit.map_or(usize::MAX, |n| n.max(1) as usize);
    let rest = turns.len().saturating_sub(start);
    let data: Vec<Turn> = turns
        .into_iter()
        .skip(start)
        .take(limit)
        .map(|turn| view(turn, params.items_view.unwrap_or(TurnItemsView::Summary)))
        .collect();
    let next_cursor = (rest > data.len())
        .then(|| data.last().map(|turn| format!("after:{}", turn.id)))
        .flatten();
    let backwards_cursor = data.first().map(|turn| format!("from:{}", turn.id));
    Ok(ThreadTurnsListResponse {
        data,
        next_cursor,
        backwards_cursor,
    })
}

fn view(turn: Turn, items_view: TurnItemsView) -> Turn {
    match items_view {
        TurnItemsView::Full => Turn {
            items_view: TurnItemsView::Full,
            ..turn
        },
        TurnItemsView::Summary => troupe_app_server_protocol::translate::summary_view(turn),
        TurnItemsView::NotLoaded => Turn {
            items: Vec::new(),
            items_view: TurnItemsView::NotLoaded,
            ..turn
        },
    }
}
