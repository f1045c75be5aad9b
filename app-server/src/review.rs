//! `review/start`: a code review run as a turn of the supplied thread (Codex's only delivery,
//! `inline`). The target (`uncommittedChanges`, `baseBranch`, `commit`, `custom`) is checked
//! against the thread's repository with `git` and turned into the review request
//! (`troupe_actors::review`); the turn starts like `turn/start`'s, and the answer is Codex's
//! `ReviewStartResponse`: `{reviewThreadId, turn}`.
//!
//! A thread's base instructions are fixed for its life, so the review instructions travel in
//! the turn's input, ahead of the request naming the target; the model's answer is the review
//! JSON object, delivered as the turn's agent message.

use crate::hub::Hub;
use crate::live::{ClientSink, Control};
use crate::methods::Reply;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;
use troupe_actors::review::{self, ReviewTarget};
use troupe_app_server_protocol::jsonrpc::{self, invalid_params, Line};
use troupe_app_server_protocol::protocol::UserInput;

/// Codex's `ReviewStartParams`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReviewStartParams {
    thread_id: String,
    target: TargetParam,
    #[serde(default)]
    delivery: Option<String>,
}

/// Codex's `ReviewTarget`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum TargetParam {
    UncommittedChanges,
    BaseBranch {
        branch: String,
    },
    Commit {
        sha: String,
        #[serde(default)]
        title: Option<String>,
    },
    Custom {
        instructions: String,
    },
}

impl From<TargetParam> for ReviewTarget {
    fn from(param: TargetParam) -> Self {
        match param {
            TargetParam::UncommittedChanges => ReviewTarget::Uncommitted,
            TargetParam::BaseBranch { branch } => ReviewTarget::BaseBranch { branch },
            TargetParam::Commit { sha, title } => ReviewTarget::Commit { sha, title },
            TargetParam::Custom { instructions } => ReviewTarget::Custom { instructions },
        }
    }
}

/// Queued lines a client may have waiting in the relay of its review response.
const RELAY_CAPACITY: usize = 1024;

/// Handles `review/start`.
pub async fn review_start(hub: &Arc<Hub>, client: &ClientSink, id: &Value, params: Value) -> Reply {
    let result: Result<(), String> = async {
        let params: ReviewStartParams =
            serde_json::from_value(params).map_err(|err| invalid_params(&err))?;
        if let Some(delivery) = params.delivery.as_deref().filter(|d| *d != "inline") {
            return Err(format!(
                "Invalid request: unknown variant `{delivery}`, expected `inline`"
            ));
        }
        let live = hub
            .thread(&params.thread_id)
            .await
            .map_err(|err| err.to_string())?;
        let cwd = live.settings().cwd;
        let target: ReviewTarget = params.target.into();
        let request = tokio::task::spawn_blocking(move || review::resolve(&target, &cwd))
            .await
            .map_err(|err| format!("the review target could not be checked: {err}"))?
            .map_err(|err| format!("review target: {err}"))?;
        let input = vec![
            UserInput::Text {
                text: review::prompt::REVIEW_INSTRUCTIONS.to_string(),
                text_elements: Vec::new(),
            },
            UserInput::Text {
                text: request.prompt,
                text_elements: Vec::new(),
            },
        ];
        live.control
            .send(Control::StartTurn {
                client: relay(client, id.clone(), params.thread_id),
                id: id.clone(),
                input,
                overrides: None,
            })
            .map_err(|_| "the thread has stopped".to_string())
    }
    .await;
    match result {
        Ok(()) => Reply::Later,
        Err(message) => Reply::Now(Err(message)),
    }
}

/// A sink for the thread's pump that passes every line on to `client`, adding
/// `reviewThreadId` to the answer of request `id` (the pump answers it as `turn/start`).
fn relay(client: &ClientSink, id: Value, thread_id: String) -> ClientSink {
    let (tx, mut rx) = mpsc::channel::<Line>(RELAY_CAPACITY);
    let out = client.tx.clone();
    tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            let line = review_response(&line, &id, &thread_id).unwrap_or(line);
            if out.send(line).await.is_err() {
                return;
            }
        }
    });
    ClientSink {
        conn: client.conn,
        tx,
        lag: client.lag.clone(),
    }
}

/// `line` with `reviewThreadId` added, when it is the successful answer to request `id`.
fn review_response(line: &Line, id: &Value, thread_id: &str) -> Option<Line> {
    let mut message: Value = serde_json::from_str(line).ok()?;
    if message.get("id") != Some(id) {
        return None;
    }
    let result = message.get_mut("result")?.as_object_mut()?;
    result.insert(
        "reviewThreadId".into(),
        Value::String(thread_id.to_string()),
    );
    let result = Value::Object(result.clone());
    Some(jsonrpc::response(id, result))
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
