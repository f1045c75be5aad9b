//! One `troupe` / `troupe-reply` call: a turn on a thread, its events streamed to the client
//! (logging notifications, and progress notifications when the request carried a progress
//! token), approvals asked as elicitation requests when the client supports them and denied
//! otherwise, and the final message as the result.

use super::notify::Notifier;
use std::collections::BTreeMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use troupe_actors::runtime::ThreadClient;
use troupe_mcp::rmcp::model::{
    CallToolResult, ClientResult, Content, CreateElicitationRequest,
    CreateElicitationRequestParams, ElicitationAction, ElicitationSchema, Meta, ServerRequest,
};
use troupe_mcp::rmcp::service::{Peer, PeerRequestOptions, RoleServer, ServiceError};
use troupe_messages::events::EventMsg;
use troupe_messages::ids::ThreadId;
use troupe_messages::ops::{Op, ReviewDecision, UserInput};

/// Who answers an approval: the thread itself, or one of its sub-agents through it.
#[derive(Debug, Clone)]
enum Asker {
    Thread,
    Agent(ThreadId),
}

/// What a turn needs answered.
struct Question {
    asker: Asker,
    call_id: String,
    /// One line: what would run or change, and why it is asked.
    what: String,
    meta: serde_json::Value,
}

impl Question {
    fn answer(&self, decision: ReviewDecision) -> Op {
        match &self.asker {
            Asker::Thread => Op::ExecApproval {
                call_id: self.call_id.clone(),
                decision,
            },
            Asker::Agent(thread_id) => Op::AgentApproval {
                thread_id: *thread_id,
                call_id: self.call_id.clone(),
                decision,
            },
        }
    }
}

/// Runs one turn with `prompt` on `client` and returns the tool result.
#[allow(
    clippy::too_many_lines,
    reason = "a sequence of stages that read best in order; split when it grows"
)]
pub async fn run_turn(
    client: &mut ThreadClient,
    prompt: String,
    peer: &Peer<RoleServer>,
    notifier: &mut Notifier,
    cancelled: CancellationToken,
) -> CallToolResult {
    let thread_id = client.handle.thread_id.to_string();
    if let Err(err) = client.submit(Op::UserInput {
        items: vec![UserInput::Text { text: prompt }],
    }) {
        return failure(
            &thread_id,
            format!("cannot start the turn: {err}"),
            Vec::new(),
        );
    }
    let elicitation = peer.supports_elicitation();
    let (answers_tx, mut answers_rx) = mpsc::unbounded_channel::<(Op, Option<String>)>();
    let mut notes: Vec<String> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut interrupted = false;
    loop {
        let event = tokio::select! {
            event = client.next_event() => event,
            Some((op, note)) = answers_rx.recv() => {
                notes.extend(note);
                if client.submit(op).is_err() {
                    return failure(&thread_id, "the thread stopped".into(), notes);
                }
                continue;
            }
            () = cancelled.cancelled(), if !interrupted => {
                // The client gave up on the call: stop the turn, answer when it has stopped.
                interrupted = true;
                let _ = client.submit(Op::Interrupt);
                continue;
            }
        };
        let Some(event) = event else {
            return failure(&thread_id, "the thread stopped".into(), notes);
        };
        notifier.event(peer, &thread_id, &event.msg).await;
        let question = match event.msg {
            EventMsg::TurnComplete {
                last_agent_message, ..
            } => {
                let message = last_agent_message.unwrap_or_default();
                let mut content = vec![Content::text(message.clone())];
                content.extend(notes.into_iter().map(Content::text));
                let mut result = CallToolResult::success(content);
                result.structured_content =
                    Some(serde_json::json!({ "threadId": thread_id, "content": message }));
                return result;
            }
            EventMsg::TurnAborted { reason, .. } => {
                let reason = serde_json::to_value(reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "unknown".into());
                let mut text = format!("the turn was aborted ({reason})");
                if interrupted {
                    text.push_str(": the client cancelled the call");
                }
                if !errors.is_empty() {
                    text.push_str(&format!(": {}", errors.join("; ")));
                }
                return failure(&thread_id, text, notes);
            }
            EventMsg::Error { error, .. } => {
                errors.push(error.to_string());
                None
            }
            EventMsg::ExecApprovalRequest {
                call_id,
                command,
                cwd,
                reason,
                ..
            } => Some(exec_question(
                Asker::Thread,
                call_id,
                &command,
                &cwd,
                reason,
            )),
            EventMsg::ApplyPatchApprovalRequest {
                call_id,
                files,
                reason,
            } => Some(patch_question(Asker::Thread, call_id, &files, reason)),
            EventMsg::AgentEvent { thread_id, msg, .. } => agent_question(thread_id, *msg),
            // The MCP client has no question channel here: the recommended options, said in
            // a warning, as `exec` answers them.
            EventMsg::RequestUserInput { call_id, questions } => {
                use troupe_actors::tool_orchestrator::tools::request_user_input::recommended_answers;
                let note = format!(
                    "the model asked {} question(s); the MCP server cannot ask anyone, so it \
                     answered with the recommended options",
                    questions.len()
                );
                notifier.warning(peer, &thread_id, &note).await;
                let answers = recommended_answers(&questions);
                if client
                    .submit(Op::UserInputAnswer { call_id, answers })
                    .is_err()
                {
                    return failure(&thread_id, "the thread stopped".into(), notes);
                }
                None
            }
            // Streamed to the client above; nothing to answer.
            EventMsg::SessionConfigured { .. }
            | EventMsg::TurnStarted { .. }
            | EventMsg::InputInjected { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentMessage { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ExecCommandOutputDelta { .. }
            | EventMsg::AgentReasoning { .. }
            | EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandEnd { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::McpToolCallBegin { .. }
            | EventMsg::McpToolCallEnd { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::PatchApplyEnd { .. }
            | EventMsg::PlanUpdated { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::StreamRetry { .. }
            | EventMsg::Warning { .. }
            | EventMsg::CollabToolCall { .. }
            | EventMsg::HookStarted { .. }
            | EventMsg::HookCompleted { .. }
            | EventMsg::PermissionsGranted { .. }
            | EventMsg::GoalUpdated { .. }
            | EventMsg::ShutdownComplete => None,
        };
        let Some(question) = question else { continue };
        if elicitation {
            // Asked in a task: the loop keeps reading events while the user thinks.
            let peer = peer.clone();
            let answers = answers_tx.clone();
            tokio::spawn(async move {
                let answer = ask(&peer, &question).await;
                let _ = answers.send(answer);
            });
        } else {
            let note = format!(
                "Denied: {} needs approval, and this MCP client does not support elicitation \
                 requests, so nobody could be asked. Start the thread with \
                 `approval-policy: never` (or a sandbox that allows it) to let it run.",
                question.what
            );
            notifier.warning(peer, &thread_id, &note).await;
            if client
                .submit(question.answer(ReviewDecision::Denied))
                .is_err()
            {
                return failure(&thread_id, "the thread stopped".into(), notes);
            }
            notes.push(note);
        }
    }
}

/// A sub-agent's approval request, relayed by its root thread.
fn agent_question(thread_id: ThreadId, msg: EventMsg) -> Option<Question> {
    let asker = Asker::Agent(thread_id);
    if let EventMsg::ExecApprovalRequest {
        call_id,
        command,
        cwd,
        reason,
        ..
    } = msg
    {
        Some(exec_question(asker, call_id, &command, &cwd, reason))
    } else if let EventMsg::ApplyPatchApprovalRequest {
        call_id,
        files,
        reason,
    } = msg
    {
        Some(patch_question(asker, call_id, &files, reason))
    } else {
        // A sub-agent's other events were streamed; nothing to answer.
        None
    }
}

fn failure(thread_id: &str, text: String, notes: Vec<String>) -> CallToolResult {
    let mut content = vec![Content::text(text.clone())];
    content.extend(notes.into_iter().map(Content::text));
    let mut result = CallToolResult::error(content);
    result.structured_content = Some(serde_json::json!({ "threadId": thread_id, "content": text }));
    result
}

fn exec_question(
    asker: Asker,
    call_id: String,
    command: &[String],
    cwd: &std::path::Path,
    reason: Option<String>,
) -> Question {
    let line =
        shlex::try_join(command.iter().map(String::as_str)).unwrap_or_else(|_| command.join(" "));
    let mut what = format!("`{line}` in {}", cwd.display());
    if let Some(reason) = &reason {
        what.push_str(&format!(" ({reason})"));
    }
    Question {
        meta: serde_json::json!({
            "troupe/approval": "exec",
            "troupe/callId": call_id,
            "troupe/command": command,
            "troupe/cwd": cwd,
            "troupe/reason": reason,
        }),
        asker,
        call_id,
        what,
    }
}

fn patch_question(
    asker: Asker,
    call_id: String,
    files: &[std::path::PathBuf],
    reason: Option<String>,
) -> Question {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut what = format!("a patch to {}", names.join(", "));
    if let Some(reason) = &reason {
        what.push_str(&format!(" ({reason})"));
    }
    Question {
        meta: serde_json::json!({
            "troupe/approval": "patch",
            "troupe/callId": call_id,
            "troupe/files": names,
            "troupe/reason": reason,
        }),
        asker,
        call_id,
        what,
    }
}

/// Asks the client; accept approves (`{"decision": "approved_for_session"}` for the rest of
/// the session), decline denies, cancel aborts the turn. A failed request denies.
async fn ask(peer: &Peer<RoleServer>, question: &Question) -> (Op, Option<String>) {
    let mut meta = Meta::new();
    if let serde_json::Value::Object(map) = &question.meta {
        meta.0.extend(map.clone());
    }
    let params = CreateElicitationRequestParams {
        // The request's own `_meta` (below) carries the details: rmcp puts the progress
        // token there, and a second `_meta` in the params would make the JSON ambiguous.
        meta: None,
        message: format!("Troupe asks to run {}. Allow it?", question.what),
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    };
    let request = ServerRequest::CreateElicitationRequest(CreateElicitationRequest {
        method: Default::default(),
        params,
        extensions: Default::default(),
    });
    let options = PeerRequestOptions {
        timeout: None,
        meta: Some(meta),
    };
    let answer = match peer.send_request_with_option(request, options).await {
        Ok(handle) => match handle.await_response().await {
            Ok(ClientResult::CreateElicitationResult(result)) => Ok(result),
            Ok(_) => Err(ServiceError::UnexpectedResponse),
            Err(err) => Err(err),
        },
        Err(err) => Err(err),
    };
    match answer {
        Ok(result) => {
            let decision = match result.action {
                ElicitationAction::Accept => {
                    let for_session = result
                        .content
                        .as_ref()
                        .and_then(|c| c.get("decision"))
                        .and_then(|d| d.as_str())
                        == Some("approved_for_session");
                    if for_session {
                        ReviewDecision::ApprovedForSession
                    } else {
                        ReviewDecision::Approved
                    }
                }
                ElicitationAction::Decline => ReviewDecision::Denied,
                ElicitationAction::Cancel => ReviewDecision::Abort,
            };
            (question.answer(decision), None)
        }
        Err(err) => (
            question.answer(ReviewDecision::Denied),
            Some(format!(
                "Denied: {} needs approval, and the elicitation request failed: {err}",
                question.what
            )),
        ),
    }
}
