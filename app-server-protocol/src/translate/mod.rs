//! Runtime events → app-server notifications and server requests, one thread at a time. Pure:
//! the live pump feeds it a thread's events as they come, and `turns_from_rollout` feeds it the
//! events a rollout recorded, so `thread/read` shows what a live client saw.

use crate::hooks::{Completed, HookRuns, Started};
use crate::items::{breakdown, collab_item, command_item, plan_step};
use crate::protocol::{
    ContextCompactedNotification, ErrorNotification, ItemCompletedNotification,
    ItemDeltaNotification, ItemStartedNotification, ItemStatus,
    ReasoningSummaryTextDeltaNotification, ThreadActiveFlag, ThreadItem, ThreadStatus,
    ThreadStatusChangedNotification, ThreadTokenUsage, ThreadTokenUsageUpdatedNotification, Turn,
    TurnDiffUpdatedNotification, TurnError, TurnItemsView, TurnNotification,
    TurnPlanUpdatedNotification, TurnStatus, UserInput, WarningNotification,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use troupe_messages::agents::CollabCallStatus;
use troupe_messages::events::{AbortReason, EventMsg};

/// What one event becomes on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    Notify {
        method: &'static str,
        params: Value,
    },
    /// A question for the client; `call_id` is what the answer resolves. `agent` names the
    /// sub-agent that asks when this thread (the root of its tree) relays the question: the
    /// answer goes to that agent's thread through this one.
    Ask {
        method: &'static str,
        call_id: String,
        params: Value,
        agent: Option<String>,
    },
    /// A sub-agent's turn ended: whatever it still asked through this thread is moot.
    AgentTurnEnded {
        thread_id: String,
    },
}

pub use crate::turn_ids::{parse_turn_id, turn_wire_id};

pub(crate) struct OpenTurn {
    id: String,
    started_ms: i64,
    items: Vec<ThreadItem>,
    agent: Option<(String, String)>,
    reasoning: Option<(String, String)>,
    error: Option<TurnError>,
    /// The cwd of each command that began (its end does not repeat it).
    command_cwds: HashMap<String, PathBuf>,
    /// Commands whose output was streamed while they ran (their end adds no delta).
    streamed: HashSet<String>,
    /// Commands asked about and not begun: one the user denies never begins, and is shown
    /// as a `declined` item when its output (the refusal) is recorded.
    asked: HashMap<String, (Vec<String>, PathBuf)>,
    /// When each tool call in flight started (its item's `durationMs`).
    tool_started_ms: HashMap<String, i64>,
    /// A turn of the user's own shell command (`thread/shellCommand`, Codex's standalone
    /// user-shell turn): the command's call id; it ends with the command.
    user_shell: Option<String>,
}

/// One thread's translation state: the open turn and its streaming items.
pub struct Translator {
    thread_id: String,
    pub(crate) turn: Option<OpenTurn>,
    /// Inputs submitted with `turn/start`, shown as the turn's first item when it starts.
    pub(crate) pending_inputs: VecDeque<Vec<UserInput>>,
    /// The calls whose approval this thread waits for.
    waiting: HashSet<String>,
    /// The running turn of each sub-agent of this thread's tree (relayed asks name it).
    agent_turns: HashMap<String, String>,
    next_item: u64,
    /// Kept only when rebuilding turns from a rollout.
    pub(crate) finished: Option<Vec<Turn>>,
    /// Hook runs started and not completed.
    hooks: HookRuns,
    /// The model's context window, told with token usage.
    pub context_window: Option<u64>,
}

impl Translator {
    pub fn new(thread_id: String) -> Self {
        Self {
            thread_id,
            turn: None,
            pending_inputs: VecDeque::new(),
            waiting: HashSet::new(),
            agent_turns: HashMap::new(),
            next_item: 0,
            finished: None,
            hooks: HookRuns::default(),
            context_window: None,
        }
    }

    /// The input of the next turn to start (shown as its `userMessage` item).
    pub fn expect_input(&mut self, input: Vec<UserInput>) {
        self.pending_inputs.push_back(input);
    }

    /// The running turn's wire id.
    pub fn current_turn(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.id.as_str())
    }

    /// The thread's status as clients see it.
    pub fn status(&self) -> ThreadStatus {
        match &self.turn {
            None => ThreadStatus::Idle,
            Some(_) => ThreadStatus::Active {
                active_flags: if !self.waiting.is_empty() {
                    vec![ThreadActiveFlag::WaitingOnApproval]
                } else {
                    Vec::new()
                },
            },
        }
    }

    /// The running turn as it stands (items so far), for a client that resumes mid-turn.
    pub fn open_turn(&self) -> Option<Turn> {
        self.turn.as_ref().map(|t| Turn {
            id: t.id.clone(),
            items: t.items.clone(),
            items_view: TurnItemsView::Full,
            status: TurnStatus::InProgress,
            error: None,
            started_at: Some(t.started_ms / 1000),
            completed_at: None,
            duration_ms: None,
            root_turn_id: Some(t.id.clone()),
        })
    }

    /// The approval of `call_id` was answered (by a client, or another frontend of the same
    /// tree): the thread no longer waits for it.
    pub fn approval_resolved(&mut self, call_id: &str) -> Vec<Out> {
        if self.waiting.remove(call_id) {
            vec![self.status_changed()]
        } else {
            Vec::new()
        }
    }

    /// A tool's output was recorded: its call no longer waits for approval, and a command the
    /// user denied (asked, never begun, answered with the refusal) stays in the transcript as
    /// a `declined` item, as the TUI shows it `denied`.
    pub(crate) fn tool_output(
        &mut self,
        item: &troupe_messages::items::ResponseItem,
        now_ms: i64,
    ) -> Vec<Out> {
        let Some(call_id) = tool_output_call_id(item) else {
            return Vec::new();
        };
        let mut out = self.approval_resolved(call_id);
        let asked = self.turn.as_mut().and_then(|t| t.asked.remove(call_id));
        if let Some((command, cwd)) = asked.filter(|_| refused(item)) {
            let item = command_item(call_id, &command, &cwd, ItemStatus::Declined);
            out.push(self.started(&self.turn_id(), item.clone(), now_ms));
            out.push(self.completed(item, now_ms));
        }
        out
    }

    /// Translates one event of this thread.
    #[allow(
        clippy::too_many_lines,
        reason = "one arm per event variant, each a few lines of wire item"
    )]
    pub fn on_event(&mut self, msg: &EventMsg, now_ms: i64) -> Vec<Out> {
        let mut out = Vec::new();
        match msg {
            EventMsg::TurnStarted { turn_id } => {
                let id = turn_wire_id(&self.thread_id, *turn_id);
                self.open(id, now_ms, None, &mut out);
                if let Some(content) = self.pending_inputs.pop_front() {
                    out.extend(self.user_message(content, now_ms));
                }
            }
            EventMsg::InputInjected { text, .. } => {
                if let Some(item) = self.agent_report(text) {
                    out.push(self.started(&self.turn_id(), item.clone(), now_ms));
                    out.push(self.completed(item, now_ms));
                    return out;
                }
                let content = vec![UserInput::Text {
                    text: text.clone(),
                    text_elements: Vec::new(),
                }];
                out.extend(self.user_message(content, now_ms));
            }
            EventMsg::AgentMessageDelta { delta } => {
                let item_id = self.open_agent(&mut out, now_ms);
                if let Some((_, text)) = self.turn.as_mut().and_then(|t| t.agent.as_mut()) {
                    text.push_str(delta);
                }
                out.push(self.delta("item/agentMessage/delta", &item_id, delta));
            }
            EventMsg::AgentMessage { message } => {
                let item_id = self.open_agent(&mut out, now_ms);
                if let Some(turn) = self.turn.as_mut() {
                    turn.agent = None;
                }
                let item = ThreadItem::AgentMessage {
                    id: item_id,
                    text: message.clone(),
                    phase: None,
                };
                out.push(self.completed(item, now_ms));
            }
            EventMsg::AgentReasoningDelta { delta } => {
                let item_id = self.open_reasoning(&mut out, now_ms);
                out.push(notify(
                    "item/reasoning/summaryTextDelta",
                    &ReasoningSummaryTextDeltaNotification {
                        thread_id: self.thread_id.clone(),
                        turn_id: self.turn_id(),
                        item_id,
                        delta: delta.clone(),
                        summary_index: 0,
                    },
                ));
            }
            EventMsg::AgentReasoning { text } => {
                let item_id = self.open_reasoning(&mut out, now_ms);
                if let Some(turn) = self.turn.as_mut() {
                    turn.reasoning = None;
                }
                let item = ThreadItem::Reasoning {
                    id: item_id,
                    summary: vec![text.clone()],
                    content: Vec::new(),
                };
                out.push(self.completed(item, now_ms));
            }
            EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandEnd { .. }
            | EventMsg::ExecCommandOutputDelta { .. }
            | EventMsg::ExecApprovalRequest { .. }
            | EventMsg::ApplyPatchApprovalRequest { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::McpToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::McpToolCallEnd { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::PatchApplyEnd { .. } => self.on_tool_event(msg, now_ms, &mut out),
            EventMsg::PlanUpdated { explanation, plan } => out.push(notify(
                "turn/plan/updated",
                &TurnPlanUpdatedNotification {
                    thread_id: self.thread_id.clone(),
                    turn_id: self.turn_id(),
                    explanation: explanation.clone(),
                    plan: plan.iter().map(plan_step).collect(),
                },
            )),
            EventMsg::TurnDiff { unified_diff } => out.push(notify(
                "turn/diff/updated",
                &TurnDiffUpdatedNotification {
                    thread_id: self.thread_id.clone(),
                    turn_id: self.turn_id(),
                    diff: unified_diff.clone(),
                },
            )),
            EventMsg::TokenCount { last, total } => out.push(notify(
                "thread/tokenUsage/updated",
                &ThreadTokenUsageUpdatedNotification {
                    thread_id: self.thread_id.clone(),
                    turn_id: self.turn_id(),
                    token_usage: ThreadTokenUsage {
                        total: breakdown(total),
                        last: breakdown(last),
                        model_context_window: self
                            .context_window
                            .and_then(|w| i64::try_from(w).ok()),
                    },
                },
            )),
            EventMsg::StreamRetry { reason, .. } => {
                out.push(self.error(
                    TurnError {
                        message: reason.clone(),
                        additional_details: None,
                        codex_error_info: None,
                    },
                    true,
                ));
            }
            EventMsg::Error { error, fatal } => {
                let turn_error = TurnError {
                    message: error.to_string(),
                    additional_details: None,
                    codex_error_info: Some(crate::items::error_info(error)),
                };
                if *fatal {
                    if let Some(turn) = self.turn.as_mut() {
                        turn.error = Some(turn_error.clone());
                    }
                }
                out.push(self.error(turn_error, false));
            }
            EventMsg::TurnComplete { .. } => {
                out.extend(self.end_turn(TurnStatus::Completed, now_ms))
            }
            EventMsg::TurnAborted { reason, .. } => {
                let status = match reason {
                    AbortReason::Interrupted | AbortReason::Shutdown => TurnStatus::Interrupted,
                    AbortReason::Failed => TurnStatus::Failed,
                };
                out.extend(self.end_turn(status, now_ms));
            }
            // Already told another way (thread/started, item notifications), or nothing a
            // Codex client has a notification for.
            // A recorded tool output ends the call: a denied one was asked and never began.
            EventMsg::ItemRecorded { item } => out.extend(self.tool_output(item, now_ms)),
            EventMsg::ContextCompacted { turn_id, .. } => out.push(notify(
                "thread/compacted",
                &ContextCompactedNotification {
                    thread_id: self.thread_id.clone(),
                    turn_id: turn_wire_id(&self.thread_id, *turn_id),
                },
            )),
            EventMsg::Warning { message } => out.push(notify(
                "warning",
                &WarningNotification {
                    thread_id: Some(self.thread_id.clone()),
                    message: message.clone(),
                },
            )),
            EventMsg::SessionConfigured { .. } | EventMsg::ShutdownComplete => {}
            EventMsg::CollabToolCall {
                call_id,
                tool,
                sender_thread_id,
                receiver_thread_ids,
                prompt,
                agents_states,
                status,
            } => {
                let item = collab_item(
                    call_id,
                    tool,
                    *sender_thread_id,
                    receiver_thread_ids,
                    prompt.as_deref(),
                    agents_states,
                    *status,
                );
                if *status == CollabCallStatus::InProgress {
                    out.push(self.started(&self.turn_id(), item, now_ms));
                } else {
                    out.push(self.completed(item, now_ms));
                }
            }
            // A sub-agent is a thread of its own (`thread/list` shows it with its task path in
            // `source`, `thread/resume` subscribes to it): the root's relayed copy of its
            // activity is not repeated on the root's wire, except its approval requests,
            // which the root's clients answer (`agents`).
            EventMsg::AgentEvent {
                thread_id,
                task_path,
                msg,
            } => out.extend(self.agent_event(&thread_id.to_string(), task_path, msg, now_ms)),
            // The approval that led to it was a server request; the grant has no
            // notification of its own.
            EventMsg::PermissionsGranted { .. } => {}
            EventMsg::HookStarted {
                run_id,
                event_name,
                source,
                ..
            } => {
                let run = Started {
                    run_id,
                    event: *event_name,
                    source: source.as_deref(),
                };
                let turn_id = self.turn.as_ref().map(|t| t.id.as_str());
                out.push(self.hooks.started(&self.thread_id, turn_id, run, now_ms));
            }
            EventMsg::HookCompleted {
                run_id,
                event_name,
                duration_ms,
                decision,
                message,
                ..
            } => {
                let run = Completed {
                    run_id,
                    event: *event_name,
                    duration_ms: *duration_ms,
                    decision: *decision,
                    message: message.as_deref(),
                };
                let turn_id = self.turn.as_ref().map(|t| t.id.as_str());
                out.push(self.hooks.completed(&self.thread_id, turn_id, run, now_ms));
            }
            // Goals: not on this wire (Codex 0.169's app-server schema has no goal
            // notification); the follow-up turns show as turns of their own.
            EventMsg::GoalUpdated { .. } => {}
            EventMsg::RequestUserInput { call_id, questions } => {
                out.push(Out::Ask {
                    agent: None,
                    method: "item/tool/requestUserInput",
                    call_id: call_id.clone(),
                    params: serde_json::json!({
                        "threadId": self.thread_id,
                        "turnId": self.turn_id(),
                        "itemId": call_id,
                        "isBlocking": true,
                        "questions": questions.iter().map(|q| serde_json::json!({
                            "id": q.id,
                            "header": q.header,
                            "question": q.question,
                            "isOther": true,
                            "isSecret": false,
                            "options": q.options,
                        })).collect::<Vec<_>>(),
                    }),
                });
            }
        }
        out
    }
}

/// A finished turn as `turn/completed` carries it (Codex's summary view): the final agent
/// message only, or no items (`notLoaded`) when the turn ended without one; the whole turn
/// is what `thread/read` and `thread/resume` return.
pub fn summary_view(turn: Turn) -> Turn {
    let last_message = turn
        .items
        .iter()
        .rev()
        .find(|item| matches!(item, ThreadItem::AgentMessage { .. }))
        .cloned();
    let (items, items_view) = match last_message {
        Some(message) => (vec![message], TurnItemsView::Summary),
        None => (Vec::new(), TurnItemsView::NotLoaded),
    };
    Turn {
        items,
        items_view,
        ..turn
    }
}

/// The call a recorded tool output answers.
pub fn tool_output_call_id(item: &troupe_messages::items::ResponseItem) -> Option<&str> {
    use troupe_messages::items::ResponseItem;
    match item {
        ResponseItem::FunctionCallOutput { call_id, .. }
        | ResponseItem::CustomToolCallOutput { call_id, .. } => Some(call_id),
        _ => None,
    }
}

/// Whether a tool's output is the user's refusal (`exec command rejected by user…`).
fn refused(item: &troupe_messages::items::ResponseItem) -> bool {
    use troupe_messages::items::ResponseItem;
    use troupe_messages::tools::REJECTED_BY_USER;
    match item {
        ResponseItem::FunctionCallOutput { output, .. } => {
            output.text().starts_with(REJECTED_BY_USER)
        }
        ResponseItem::CustomToolCallOutput { output, .. } => output.starts_with(REJECTED_BY_USER),
        _ => false,
    }
}

mod agents;
mod tools;
mod turn;

#[cfg(test)]
mod fields_tests;
#[cfg(test)]
mod tests;

pub(crate) fn notify(method: &'static str, params: &impl Serialize) -> Out {
    Out::Notify {
        method,
        params: to_value(params),
    }
}

pub(crate) fn to_value(params: &impl Serialize) -> Value {
    serde_json::to_value(params).unwrap_or(Value::Null)
}
