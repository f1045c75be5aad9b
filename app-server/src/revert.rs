//! Codex's `thread/revert`: the conversation cut back to before a turn, in Codex's shapes
//! (`{threadId, beforeTurnId}` → `{thread, turnsBackwardsCursor, itemsBackwardsCursor}`, then
//! `thread/reverted` to the client that asked). As Codex's, it does not touch files; it is
//! Troupe's rewind of the conversation (`troupe/thread/rewind` with `code: false`), so it is
//! undoable the same way. A thread this server has loaded is unloaded first (refused while
//! a turn runs); the client resumes it afterwards.

use crate::hub::{check_thread_id, Hub, SettingsRequest};
use crate::live::ClientSink;
use crate::methods::Reply;
use serde_json::Value;
use std::sync::Arc;
use troupe_actors::session::checkpoints;
use troupe_actors::thread_store::rewind::{rewind, RewindRequest};
use troupe_app_server_protocol::protocol::{
    ThreadRevertParams, ThreadRevertResponse, ThreadRevertedNotification,
};

pub async fn thread_revert(
    hub: &Arc<Hub>,
    client: &ClientSink,
    id: &Value,
    params: Value,
) -> Reply {
    match revert(hub, params).await {
        Ok((response, thread_id)) => {
            // The answer, then the notification, in that order on this connection.
            client.send(troupe_app_server_protocol::jsonrpc::response(id, response));
            if let Ok(params) = serde_json::to_value(ThreadRevertedNotification { thread_id }) {
                client.send(troupe_app_server_protocol::jsonrpc::notification(
                    "thread/reverted",
                    params,
                ));
            }
            Reply::Later
        }
        Err(message) => Reply::Now(Err(message)),
    }
}

async fn revert(hub: &Arc<Hub>, params: Value) -> Result<(Value, String), String> {
    let params: ThreadRevertParams = serde_json::from_value(params)
        .map_err(|e| troupe_app_server_protocol::jsonrpc::invalid_params(&e))?;
    check_thread_id(&params.thread_id).map_err(|e| e.to_string())?;
    let turn = troupe_app_server_protocol::turn_ids::parse_turn_id(
        &params.thread_id,
        &params.before_turn_id,
    )
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
