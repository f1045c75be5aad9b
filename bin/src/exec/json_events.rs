//! Runtime events → `exec --json` lines, shaped exactly like Codex's `exec --json` output.

use serde_json::{json, Value};
use std::collections::HashMap;
use troupe_messages::agents::CollabCallStatus;
use troupe_messages::errors::TurnError;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::tools::{FileChange, FileChangeKind, PlanItem, StepStatus};
use troupe_messages::usage::TokenUsage;

/// Converts events to JSONL objects; remembers item ids and the turn's last error.
#[derive(Default)]
pub struct JsonEvents {
    next_item: u64,
    /// Command call id → item id of its `item.started`.
    commands: HashMap<String, String>,
    last_error: Option<String>,
    /// Item id of the turn's `todo_list`, once `update_plan` was called.
    todo_list: Option<(String, Value)>,
}

/// The command line Codex shows for an argv.
pub fn command_line(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

impl JsonEvents {
    fn item_id(&mut self) -> String {
        let id = format!("item_{}", self.next_item);
        self.next_item += 1;
        id
    }

    /// The lines one event produces (often none).
    pub fn convert(&mut self, msg: &EventMsg) -> Vec<Value> {
        match msg {
            EventMsg::SessionConfigured { thread_id, .. } => {
                vec![json!({"type": "thread.started", "thread_id": thread_id.to_string()})]
            }
            EventMsg::TurnStarted { .. } => {
                self.last_error = None;
                vec![json!({"type": "turn.started"})]
            }
            EventMsg::ExecCommandBegin {
                call_id, command, ..
            } => {
                let id = self.item_id();
                self.commands.insert(call_id.clone(), id.clone());
                vec![json!({"type": "item.started", "item": {
                    "id": id, "type": "command_execution", "command": command_line(command),
                    "aggregated_output": "", "exit_code": null, "status": "in_progress"}})]
            }
            EventMsg::ExecCommandEnd {
                call_id,
                command,
                exit_code,
                aggregated_output,
                ..
            } => {
                let id = match self.commands.remove(call_id) {
                    Some(id) => id,
                    None => self.item_id(),
                };
                let status = if *exit_code == Some(0) {
                    "completed"
                } else {
                    "failed"
                };
                vec![json!({"type": "item.completed", "item": {
                    "id": id, "type": "command_execution", "command": command_line(command),
                    "aggregated_output": aggregated_output, "exit_code": exit_code,
                    "status": status}})]
            }
            EventMsg::PatchApplyEnd {
                changes, success, ..
            } => {
                let id = self.item_id();
                let status = if *success { "completed" } else { "failed" };
                vec![json!({"type": "item.completed", "item": {
                    "id": id, "type": "file_change", "changes": changes_json(changes),
                    "status": status}})]
            }
            EventMsg::PlanUpdated { plan, .. } => {
                let items = todo_items(plan);
                match &mut self.todo_list {
                    Some((id, last)) => {
                        *last = items.clone();
                        vec![json!({"type": "item.updated", "item": {
                            "id": id, "type": "todo_list", "items": items}})]
                    }
                    None => {
                        let id = self.item_id();
                        self.todo_list = Some((id.clone(), items.clone()));
                        vec![json!({"type": "item.started", "item": {
                            "id": id, "type": "todo_list", "items": items}})]
                    }
                }
            }
            EventMsg::AgentMessage { message } => {
                let id = self.item_id();
                vec![json!({"type": "item.completed", "item": {
                    "id": id, "type": "agent_message", "text": message}})]
            }
            EventMsg::AgentReasoning { text } => {
                let id = self.item_id();
                vec![json!({"type": "item.completed", "item": {
                    "id": id, "type": "reasoning", "text": text}})]
            }
            EventMsg::Warning { message } => {
                let id = self.item_id();
                vec![json!({"type": "item.completed", "item": {
                    "id": id, "type": "error", "message": message}})]
            }
            EventMsg::StreamRetry {
                attempt,
                max_attempts,
                reason,
                ..
            } => vec![json!({"type": "error",
                "message": format!("Reconnecting... {attempt}/{max_attempts} ({reason})")})],
            EventMsg::Error { error, fatal } => {
                let message = error_text(error);
                if *fatal {
                    self.last_error = Some(message.clone());
                }
                vec![json!({"type": "error", "message": message})]
            }
            EventMsg::TurnComplete { usage, .. } => {
                let mut lines = self.finish_todo_list();
                lines.push(json!({"type": "turn.completed", "usage": usage_json(usage)}));
                lines
            }
            EventMsg::TurnAborted { reason, .. } => {
                let message = self.last_error.take().unwrap_or_else(|| match reason {
                    AbortReason::Interrupted => "the turn was interrupted".into(),
                    AbortReason::Shutdown => "the thread was shut down".into(),
                    AbortReason::Failed => "the turn failed".into(),
                });
                let mut lines = self.finish_todo_list();
                lines.push(json!({"type": "turn.failed", "error": {"message": message}}));
                lines
            }
            // Codex's `exec --json` has no line for these: deltas (items are sent whole),
            // approval requests (exec denies them and warns), and internal bookkeeping.
            EventMsg::InputInjected { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ExecApprovalRequest { .. }
            | EventMsg::ApplyPatchApprovalRequest { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::AgentEvent { .. }
            | EventMsg::ShutdownComplete => Vec::new(),
            EventMsg::CollabToolCall {
                call_id,
                tool,
                sender_thread_id,
                receiver_thread_ids,
                prompt,
                agents_states,
                status,
            } => {
                let (kind, id) = match status {
                    CollabCallStatus::InProgress => {
                        let id = self.item_id();
                        self.commands.insert(call_id.clone(), id.clone());
                        ("item.started", id)
                    }
                    CollabCallStatus::Completed | CollabCallStatus::Failed => {
                        let id = match self.commands.remove(call_id) {
                            Some(id) => id,
                            None => self.item_id(),
                        };
                        ("item.completed", id)
                    }
                };
                let receivers: Vec<String> =
                    receiver_thread_ids.iter().map(|t| t.to_string()).collect();
                vec![json!({"type": kind, "item": {
                    "id": id, "type": "collab_tool_call", "tool": tool,
                    "sender_thread_id": sender_thread_id.to_string(),
                    "receiver_thread_ids": receivers, "prompt": prompt,
                    "agents_states": agents_states, "status": status}})]
            }
        }
    }
}

impl JsonEvents {
    /// The plan's last state as a completed item, at the end of its turn.
    fn finish_todo_list(&mut self) -> Vec<Value> {
        self.todo_list
            .take()
            .map(|(id, items)| {
                json!({"type": "item.completed", "item": {
                    "id": id, "type": "todo_list", "items": items}})
            })
            .into_iter()
            .collect()
    }
}

fn changes_json(changes: &[FileChange]) -> Value {
    changes
        .iter()
        .map(|change| {
            let kind = match change.kind {
                FileChangeKind::Add => "add",
                FileChangeKind::Delete => "delete",
                FileChangeKind::Update => "update",
            };
            json!({"path": change.path.display().to_string(), "kind": kind})
        })
        .collect()
}

fn todo_items(plan: &[PlanItem]) -> Value {
    plan.iter()
        .map(|item| json!({"text": item.step, "completed": item.status == StepStatus::Completed}))
        .collect()
}

/// The user-facing text of a turn error.
pub fn error_text(error: &TurnError) -> String {
    match error {
        TurnError::Model(model) => model.to_string(),
        TurnError::Internal { message } => format!("internal error: {message}"),
    }
}

fn usage_json(usage: &TokenUsage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "cache_write_input_tokens": 0,
        "output_tokens": usage.output_tokens,
        "reasoning_output_tokens": usage.reasoning_output_tokens,
    })
}
