//! Codex's `thread/revert`: the conversation cut back to before a turn, in Codex's shapes
//! (`{threadId, beforeTurnId}` → `{thread, turnsBackwardsCursor, itemsBackwardsCursor}`, then
//! `thread/reverted` to the client that asked). As Codex's, it does not touch files; it is
//! Troupe's rewind of the conversation (`troupe/thread/rewind` with `code: false`), so it is
//! undoable the same way. A thread this server has loaded is unloaded first (refused while
//! a turn runs); the client resumes it afterwards.

use crate::hub::{check_thread_id, Hub, SettingsRequest};
use crate::live::ClientSink;
use crate::methods::Reply;
use crate::protocol::Thread;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use troupe_actors::session::checkpoints;
use troupe_actors::thread_store::rewind::{rewind, RewindRequest};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertParams {
    pub thread_id: String,
    /// The wire id of the first turn to drop: the history keeps the turns before it.
    pub before_turn_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertResponse {
    /// The thread as it now is, without its turns (`thread/turns/list` pages them).
    pub thread: Thread,
    /// Always null: `thread/turns/list` and `thread/items/list` start from the newest
    /// without a cursor.
    pub turns_backwards_cursor: Option<String>,
    pub items_backwards_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertedNotification {
    pub thread_id: String,
}

pub async fn thread_revert(
    hub: &Arc<Hub>,
    client: &ClientSink,
    id: &Value,
    params: Value,
) -> Reply {
    match revert(hub, params).await {
        Ok((response, thread_id)) => {
            // The answer, then the notification, in that order on this connection.
            client.send(crate::wire::response(id, response));
            if let Ok(params) = serde_json::to_value(ThreadRevertedNotification { thread_id }) {
                client.send(crate::wire::notification("thread/reverted", params));
            }
            Reply::Later
        }
        Err(message) => Reply::Now(Err(message)),
    }
}

async fn revert(hub: &Arc<Hub>, params: Value) -> Result<(Value, String), String> {
    let params: ThreadRevertParams =
        serde_json::from_value(params).map_err(|e| crate::wire::invalid_params(&e))?;
    check_thread_id(&params.thread_id).map_err(|e| e.to_string())?;
    let turn = crate::turn_ids::parse_turn_id(&params.thread_id, &params.before_turn_id)
        .ok_or_else(|| {
            format!(
                "`beforeTurnId` {} is not a turn of thread {}",
                params.before_turn_id, params.thread_id
            )
        })?;
    crate::rewind::unload_idle(hub, &params.thread_id).await?;
    let settings = hub
        .settings(&SettingsRequest::default())
        .map_err(|e| e.to_string())?;
    let request = RewindRequest {
        thread: params.thread_id.clone(),
        to_turn: Some(turn.0),
        code: false,
        conversation: true,
        dry_run: false,
        force: false,
        options: checkpoints::options(&settings, true),
    };
    let home = hub.home.clone();
    let hub_for_store = hub.clone();
    tokio::task::spawn_blocking(move || {
        rewind(&home, hub_for_store.store(), &request).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())??;
    let summary = hub.summary(&params.thread_id).map_err(|e| e.to_string())?;
    let thread = hub.wire_thread(&summary, false).await;
    let response = ThreadRevertResponse {
        thread,
        turns_backwards_cursor: None,
        items_backwards_cursor: None,
    };
    let value = serde_json::to_value(response).map_err(|e| e.to_string())?;
    Ok((value, summary.id.to_string()))
}
