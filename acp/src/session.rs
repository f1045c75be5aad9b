//! One ACP session: the task that owns its thread's client, turns commands (prompt, cancel,
//! mode, approval answers) into ops and the thread's events into `session/update`s.

use crate::rpc::{Peer, RpcError};
use crate::updates::UpdateMapper;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use troupe_actors::runtime::ThreadClient;
use troupe_messages::errors::{ModelError, TurnError};
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ids::ThreadId;
use troupe_messages::ops::{Op, ReviewDecision, UserInput};
use troupe_messages::policy::CollaborationMode;

/// What a request asks of a session's task.
pub enum Command {
    /// Run a turn; answered with its `stopReason` once it ends.
    Prompt {
        op: Op,
        reply: oneshot::Sender<Result<Value, RpcError>>,
    },
    /// Stop the running turn and everything under it.
    Cancel,
    SetMode(CollaborationMode),
    /// The client's answer to a permission request (`agent`: asked by a sub-agent).
    Decision {
        call_id: String,
        agent: Option<ThreadId>,
        decision: ReviewDecision,
    },
}

/// The options of every permission request, and the decision each stands for.
const OPTIONS: [(&str, &str, &str, ReviewDecision); 3] = [
    (
        "allow_once",
        "Allow",
        "allow_once",
        ReviewDecision::Approved,
    ),
    (
        "allow_always",
        "Allow for this session",
        "allow_always",
        ReviewDecision::ApprovedForSession,
    ),
    (
        "reject_once",
        "Reject",
        "reject_once",
        ReviewDecision::Denied,
    ),
];

/// The decision a `session/request_permission` answer stands for: an unknown option or an
/// error is a rejection; `cancelled` (the prompt was cancelled) aborts the turn.
pub fn decision_of(answer: &Result<Value, RpcError>) -> ReviewDecision {
    let Ok(result) = answer else {
        return ReviewDecision::Denied;
    };
    let outcome = result.get("outcome").cloned().unwrap_or_default();
    match outcome.get("outcome").and_then(Value::as_str) {
        Some("selected") => {
            let chosen = outcome.get("optionId").and_then(Value::as_str);
            OPTIONS
                .iter()
                .find(|(id, ..)| Some(*id) == chosen)
                .map(|option| option.3.clone())
                .unwrap_or(ReviewDecision::Denied)
        }
        Some("cancelled") => ReviewDecision::Abort,
        _ => ReviewDecision::Denied,
    }
}

/// The `stopReason` of a turn that ended, or the error the prompt answers with.
pub fn stop_reason(
    aborted: Option<AbortReason>,
    failure: Option<&TurnError>,
) -> Result<Value, RpcError> {
    let reason = match (aborted, failure) {
        (None, _) => "end_turn",
        (Some(AbortReason::Interrupted | AbortReason::Shutdown), _) => "cancelled",
        (
            Some(AbortReason::Failed),
            Some(TurnError::Model(ModelError::ContextWindowExceeded { .. })),
        ) => "max_tokens",
        (Some(AbortReason::Failed), Some(TurnError::Model(ModelError::LimitReached { .. }))) => {
            "max_turn_requests"
        }
        (Some(AbortReason::Failed), Some(error)) => {
            return Err(RpcError::internal(format!("the turn failed: {error}")))
        }
        (Some(AbortReason::Failed), None) => return Err(RpcError::internal("the turn failed")),
    };
    Ok(json!({"stopReason": reason}))
}

/// Runs the session's task until its thread stops; `on_end` runs then.
pub fn spawn(
    session_id: String,
    client: ThreadClient,
    peer: Arc<Peer>,
    mapper: UpdateMapper,
    on_end: impl FnOnce() + Send + 'static,
) -> mpsc::UnboundedSender<Command> {
    let (commands, inbox) = mpsc::unbounded_channel();
    let task = Pump {
        session_id,
        client,
        peer,
        mapper,
        commands: commands.clone(),
        prompt: None,
        failure: None,
    };
    tokio::spawn(async move {
        task.run(inbox).await;
        on_end();
    });
    commands
}

struct Pump {
    session_id: String,
    client: ThreadClient,
    peer: Arc<Peer>,
    mapper: UpdateMapper,
    /// Where permission answers come back.
    commands: mpsc::UnboundedSender<Command>,
    prompt: Option<oneshot::Sender<Result<Value, RpcError>>>,
    failure: Option<TurnError>,
}

impl Pump {
    async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Command>) {
        loop {
            tokio::select! {
                command = inbox.recv() => match command {
                    Some(command) => self.on_command(command),
                    None => break,
                },
                event = self.client.next_event() => match event {
                    Some(event) => {
                        if matches!(event.msg, EventMsg::ShutdownComplete) {
                            break;
                        }
                        self.on_event(event.msg);
                    }
                    None => break,
                },
            }
        }
        if let Some(reply) = self.prompt.take() {
            let _ = reply.send(Ok(json!({"stopReason": "cancelled"})));
        }
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Prompt { op, reply } => {
                if self.prompt.is_some() {
                    let _ = reply.send(Err(RpcError::new(
                        crate::rpc::INVALID_REQUEST,
                        "a prompt is already running in this session",
                    )));
                    return;
                }
                self.failure = None;
                match self.client.submit(op) {
                    Ok(_) => self.prompt = Some(reply),
                    Err(err) => {
                        let _ = reply.send(Err(RpcError::internal(err.to_string())));
                    }
                }
            }
            Command::Cancel => {
                let _ = self.client.submit(Op::Interrupt);
            }
            Command::SetMode(mode) => {
                let _ = self.client.submit(Op::OverrideTurnContext {
                    model: None,
                    approval_policy: None,
                    sandbox_mode: None,
                    cwd: None,
                    collaboration_mode: Some(mode),
                });
            }
            Command::Decision {
                call_id,
                agent,
                decision,
            } => {
                if matches!(decision, ReviewDecision::Denied | ReviewDecision::Abort) {
                    // A refused call never begins: its pending tool call ends here.
                    self.peer.notify(
                        "session/update",
                        json!({"sessionId": self.session_id, "update": {
                            "sessionUpdate": "tool_call_update",
                            "toolCallId": call_id,
                            "status": "failed",
                            "content": [{"type": "content", "content": {"type": "text", "text": "Rejected by the user"}}],
                        }}),
                    );
                }
                let op = match agent {
                    Some(thread_id) => Op::AgentApproval {
                        thread_id,
                        call_id,
                        decision,
                    },
                    None => Op::ExecApproval { call_id, decision },
                };
                let _ = self.client.submit(op);
            }
        }
    }

    fn on_event(&mut self, msg: EventMsg) {
        let updates = self.mapper.on_event(&msg);
        for update in &updates {
            self.peer.notify(
                "session/update",
                json!({"sessionId": self.session_id, "update": update}),
            );
        }
        match &msg {
            EventMsg::ExecApprovalRequest { call_id, .. }
            | EventMsg::ApplyPatchApprovalRequest { call_id, .. } => {
                self.ask(call_id.clone(), None, updates.first().cloned());
            }
            EventMsg::AgentEvent { thread_id, msg, .. } => match msg.as_ref() {
                EventMsg::ExecApprovalRequest { call_id, .. }
                | EventMsg::ApplyPatchApprovalRequest { call_id, .. } => {
                    // The child's own call, shown to the client once for the question.
                    let shown = UpdateMapper::default().on_event(msg).into_iter().next();
                    self.ask(call_id.clone(), Some(*thread_id), shown);
                }
                _ => {}
            },
            EventMsg::Error { error, fatal: true } => self.failure = Some(error.clone()),
            EventMsg::TurnComplete { .. } => self.answer(None),
            EventMsg::TurnAborted { reason, .. } => self.answer(Some(*reason)),
            EventMsg::RequestUserInput { call_id, questions } => {
                // ACP has no way to ask questions: they are shown, and the model is told
                // nobody answered (the user can reply in the next prompt).
                let text: Vec<String> = questions
                    .iter()
                    .map(|q| format!("? {}", q.question))
                    .collect();
                self.peer.notify(
                    "session/update",
                    json!({"sessionId": self.session_id, "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": format!("\n{}\n", text.join("\n"))},
                    }}),
                );
                let _ = self.client.submit(Op::UserInputAnswer {
                    call_id: call_id.clone(),
                    answers: Default::default(),
                });
            }
            _ => {}
        }
    }

    fn answer(&mut self, aborted: Option<AbortReason>) {
        if let Some(reply) = self.prompt.take() {
            let _ = reply.send(stop_reason(aborted, self.failure.take().as_ref()));
        }
    }

    /// Asks the client in a task of its own (the session goes on streaming meanwhile); the
    /// answer comes back as a `Decision`.
    fn ask(&self, call_id: String, agent: Option<ThreadId>, shown: Option<Value>) {
        let mut tool_call = shown.unwrap_or_else(|| json!({}));
        if let Some(object) = tool_call.as_object_mut() {
            object.remove("sessionUpdate");
            object.insert("toolCallId".into(), call_id.clone().into());
        }
        let options: Vec<Value> = OPTIONS
            .iter()
            .map(|(id, name, kind, _)| json!({"optionId": id, "name": name, "kind": kind}))
            .collect();
        let params =
            json!({"sessionId": self.session_id, "toolCall": tool_call, "options": options});
        let peer = self.peer.clone();
        let commands = self.commands.clone();
        tokio::spawn(async move {
            let answer = peer.request("session/request_permission", params).await;
            let _ = commands.send(Command::Decision {
                call_id,
                agent,
                decision: decision_of(&answer),
            });
        });
    }
}

/// The input of a prompt, or the op of a slash command Troupe offers (`/compact`).
pub fn prompt_op(input: Vec<UserInput>) -> Op {
    if let [UserInput::Text { text }] = input.as_slice() {
        if text.trim() == "/compact" {
            return Op::Compact;
        }
    }
    Op::UserInput { items: input }
}

/// The slash commands offered to the client.
pub fn available_commands() -> Value {
    json!({
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "compact", "description": "Summarise the conversation to free context"},
        ],
    })
}
