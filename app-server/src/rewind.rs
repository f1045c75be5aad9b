//! `troupe/thread/rewind`: `troupe rewind` over the app-server — a thread's work tree and/or
//! conversation back to before turn N, or the last rewind undone. A thread this server has
//! loaded is unloaded first (refused while a turn runs); the client resumes it afterwards.
//! Codex's `thread/rollback` cuts only the conversation; this also restores the files.

use crate::hub::{check_thread_id, Hub, SettingsRequest};
use crate::live::Control;
use serde_json::Value;
use std::sync::Arc;
use troupe_actors::session::checkpoints;
use troupe_actors::thread_store::rewind::{rewind, RewindRequest};
use troupe_app_server_protocol::protocol::{RewindParams, RewindResponse, RewoundPath};

pub async fn thread_rewind(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: RewindParams = serde_json::from_value(params)
        .map_err(|e| troupe_app_server_protocol::jsonrpc::invalid_params(&e))?;
    check_thread_id(&params.thread_id).map_err(|e| e.to_string())?;
    if params.to_turn.is_none() && !params.undo {
        return Err("give `toTurn`, or `undo: true`".into());
    }
    unload_idle(hub, &params.thread_id).await?;
    let settings = hub
        .settings(&SettingsRequest::default())
        .map_err(|e| e.to_string())?;
    let request = RewindRequest {
        thread: params.thread_id.clone(),
        to_turn: if params.undo { None } else { params.to_turn },
        code: params.code,
        conversation: params.conversation,
        dry_run: params.dry_run,
        force: params.force,
        options: checkpoints::options(&settings, true),
    };
    let home = hub.home.clone();
    let hub_for_store = hub.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        rewind(&home, hub_for_store.store(), &request).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())??;
    let code = outcome.code.as_ref();
    let response = RewindResponse {
        thread_id: outcome.thread_id.clone(),
        dry_run: outcome.dry_run,
        changes: code
            .map(|c| {
                c.changes
                    .iter()
                    .map(|change| RewoundPath {
                        path: change.full_path().display().to_string(),
                        detail: serde_json::to_value(change.kind)
                            .ok()
                            .and_then(|v| v.as_str().map(camel))
                            .unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        failed: code
            .map(|c| {
                c.failed
                    .iter()
                    .map(|(path, why)| RewoundPath {
                        path: path.display().to_string(),
                        detail: why.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        not_covered: code
            .map(|c| {
                c.not_covered
                    .iter()
                    .map(|(root, skipped)| RewoundPath {
                        path: root.join(&skipped.path).display().to_string(),
                        detail: skipped.reason.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        turns_before: outcome.conversation.as_ref().map(|c| c.turns_before),
        turns_after: outcome.conversation.as_ref().map(|c| c.turns_after),
    };
    serde_json::to_value(response).map_err(|e| e.to_string())
}

/// Unloads `thread_id` if this server has it loaded (its session holds the rollout a rewind
/// rewrites); refused while a turn runs. The client resumes it afterwards.
pub(crate) async fn unload_idle(hub: &Arc<Hub>, thread_id: &str) -> Result<(), String> {
    if let Some(live) = hub.loaded(thread_id) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if live.control.send(Control::Snapshot { reply: tx }).is_ok() {
            if let Ok((troupe_app_server_protocol::protocol::ThreadStatus::Active { .. }, _)) =
                rx.await
            {
                return Err(format!(
                    "thread {thread_id} has a running turn; interrupt it first"
                ));
            }
        }
        drop(live);
        hub.unload(thread_id).await;
    }
    Ok(())
}

/// `mode_changed` → `modeChanged`.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
