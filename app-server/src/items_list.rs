//! Codex's `thread/items/list`: a thread's items (of one turn, or across the thread) a page
//! at a time, oldest first by default, from the rollout as `thread/read` rebuilds them.
//! Cursors: `after:<turnId>/<itemId>` continues past that item in the page's direction;
//! `from:<turnId>/<itemId>` (the `backwardsCursor`) starts at it; an anchor
//! `{type: "item", itemId}` of the requested turn is exclusive.

use crate::hub::Hub;
use troupe_app_server_protocol::protocol::{
    SortDirection, ThreadItemEntry, ThreadItemsListAnchor, ThreadItemsListCursor,
    ThreadItemsListParams, ThreadItemsListResponse,
};

pub async fn items_list(
    hub: &Hub,
    params: ThreadItemsListParams,
) -> Result<ThreadItemsListResponse, String> {
    if params.defer_output.as_ref().is_some_and(|v| !v.is_null()) {
        return Err("Invalid request: deferOutput is not supported: Troupe keeps each output in its item, so items come whole".into());
    }
    let summary = hub
        .summary(&params.thread_id)
        .map_err(|err| err.to_string())?;
    let turns = hub.wire_thread(&summary, true).await.turns;
    if let Some(turn_id) = &params.turn_id {
        if !turns.iter().any(|turn| &turn.id == turn_id) {
            return Err(format!(
                "Invalid request: turn {turn_id} is not a turn of thread {}",
                params.thread_id
            ));
        }
    }
    let entries = turns
        .into_iter()
        .filter(|turn| params.turn_id.as_ref().is_none_or(|id| &turn.id == id))
        .flat_map(|turn| {
            let turn_id = turn.id;
            turn.items.into_iter().map(move |item| ThreadItemEntry {
                item,
                turn_id: turn_id.clone(),
                started_at_ms: None,
                completed_at_ms: None,
            })
        })
        .collect();
    page(entries, &params)
}

fn item_id(entry: &ThreadItemEntry) -> String {
    serde_json::to_value(&entry.item)
        .ok()
        .and_then(|item| {
            item.get("id")
                .and_then(|id| id.as_str())
                .map(str::to_string)
        })
        .unwrap_or_default()
}

fn key(entry: &ThreadItemEntry) -> String {
    format!("{}/{}", entry.turn_id, item_id(entry))
}

/// One page of `entries` (oldest first, as the thread holds them).
pub fn page(
    mut entries: Vec<ThreadItemEntry>,
    params: &ThreadItemsListParams,
) -> Result<ThreadItemsListResponse, String> {
    if params.sort_direction == Some(SortDirection::Desc) {
        entries.reverse();
    }
    let position = |wanted: &dyn Fn(&ThreadItemEntry) -> bool, cursor: &str| {
        entries.iter().position(wanted).ok_or_else(|| {
            format!("Invalid request: cursor `{cursor}` names no item of this thread")
        })
    };
    let start = match &params.cursor {
        None => 0,
        Some(ThreadItemsListCursor::Anchor(ThreadItemsListAnchor::Item { item_id: id })) => {
            if params.turn_id.is_none() {
                return Err("Invalid request: an item anchor needs `turnId`".into());
            }
            position(&|entry| item_id(entry) == *id, id)? + 1
        }
        Some(ThreadItemsListCursor::Opaque(cursor)) => {
            if let Some(wanted) = cursor.strip_prefix("after:") {
                position(&|entry| key(entry) == wanted, cursor)? + 1
            } else if let Some(wanted) = cursor.strip_prefix("from:") {
                position(&|entry| key(entry) == wanted, cursor)?
            } else {
                return Err(format!("Invalid request: invalid cursor `{cursor}`"));
            }
        }
    };
    let limit = params.limit.map_or(usize::MAX, |n| n.max(1) as usize);
    let rest = entries.len().saturating_sub(start);
    let data: Vec<ThreadItemEntry> = entries.into_iter().skip(start).take(limit).collect();
    let next_cursor = (rest > data.len())
        .then(|| data.last().map(|entry| format!("after:{}", key(entry))))
        .flatten();
    let backwards_cursor = data.first().map(|entry| format!("from:{}", key(entry)));
    Ok(ThreadItemsListResponse {
        data,
        next_cursor,
        backwards_cursor,
    })
}
