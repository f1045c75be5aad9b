//! From Troupe's events to ACP `session/update` payloads: pure, one mapper per session (it
//! remembers which tool calls the client already knows and what they have printed).

use crate::commands::{self, command_kind, command_title, shows_in_terminal};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use troupe_messages::events::EventMsg;
use troupe_messages::ids::ThreadId;
use troupe_messages::tools::{FileChange, FileChangeKind, PlanItem, StepStatus};

/// Output kept per command for its live `tool_call_update` (the end carries the whole one).
const LIVE_OUTPUT_LIMIT: usize = 64 * 1024;
/// What a sub-agent's tool call shows of its activity.
const AGENT_LOG_LIMIT: usize = 16 * 1024;

#[derive(Debug, Default)]
pub struct UpdateMapper {
    /// Tool calls the client has been told of, with the output streamed so far.
    known: HashMap<String, String>,
    /// Whether the current message / reasoning arrived as deltas (its final copy is then
    /// not sent again).
    message_streamed: bool,
    reasoning_streamed: bool,
    /// Sub-agents by thread: the task their tool call is titled with and their activity.
    agents: HashMap<ThreadId, AgentCall>,
    /// Tasks of `spawn_agent` calls, until the agent's first event names its thread.
    spawned: HashMap<ThreadId, String>,
    /// The client shows commands in display-only terminals (`_meta.terminal_output`).
    terminal_output: bool,
    /// Commands shown in a terminal, with the bytes streamed to it so far.
    terminals: HashMap<String, usize>,
}

#[derive(Debug, Default)]
struct AgentCall {
    log: String,
    /// Commands whose begin was logged; an end without one (a replay: begins are not
    /// recorded) logs the command itself.
    begun: HashSet<String>,
}

/// The tool call id a sub-agent appears under.
pub fn agent_call_id(thread: &ThreadId) -> String {
    format!("agent-{thread}")
}

impl UpdateMapper {
    /// Commands run from now on show in display-only terminals when `on` (the client said
    /// `clientCapabilities._meta.terminal_output: true`).
    pub fn set_terminal_output(&mut self, on: bool) {
        self.terminal_output = on;
    }

    /// The updates `msg` becomes (none for events ACP has no place for).
    pub fn on_event(&mut self, msg: &EventMsg) -> Vec<Value> {
        match msg {
            EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentMessage { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::AgentReasoning { .. }
            | EventMsg::Warning { .. } => self.stream_updates(msg),
            EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandOutputDelta { .. }
            | EventMsg::ExecCommandEnd { .. }
            | EventMsg::ExecApprovalRequest { .. } => self.command_updates(msg),
            EventMsg::ApplyPatchApprovalRequest { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::PatchApplyEnd { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::McpToolCallBegin { .. }
            | EventMsg::McpToolCallEnd { .. }
            | EventMsg::PlanUpdated { .. } => self.edit_and_tool_updates(msg),
            EventMsg::CollabToolCall { .. } | EventMsg::AgentEvent { .. } => {
                self.agent_updates(msg)
            }
            EventMsg::SessionConfigured { .. }
            | EventMsg::TurnStarted { .. }
            | EventMsg::InputInjected { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::StreamRetry { .. }
            | EventMsg::Error { .. }
            | EventMsg::TurnComplete { .. }
            | EventMsg::TurnAborted { .. }
            | EventMsg::ShutdownComplete
            | EventMsg::HookStarted { .. }
            | EventMsg::HookCompleted { .. }
            | EventMsg::PermissionsGranted { .. }
            | EventMsg::GoalUpdated { .. }
            | EventMsg::RequestUserInput { .. } => Vec::new(),
        }
    }

    /// The model's answer and thoughts, streamed or whole; warnings.
    fn stream_updates(&mut self, msg: &EventMsg) -> Vec<Value> {
        match msg {
            EventMsg::AgentMessageDelta { delta } => {
                self.message_streamed = true;
                vec![chunk("agent_message_chunk", delta)]
            }
            EventMsg::AgentMessage { message } => {
                let streamed = std::mem::take(&mut self.message_streamed);
                if streamed || message.is_empty() {
                    Vec::new()
                } else {
                    vec![chunk("agent_message_chunk", message)]
                }
            }
            EventMsg::AgentReasoningDelta { delta } => {
                self.reasoning_streamed = true;
                vec![chunk("agent_thought_chunk", delta)]
            }
            EventMsg::AgentReasoning { text } => {
                let streamed = std::mem::take(&mut self.reasoning_streamed);
                if streamed || text.is_empty() {
                    Vec::new()
                } else {
                    vec![chunk("agent_thought_chunk", text)]
                }
            }
            EventMsg::Warning { message } => {
                vec![chunk(
                    "agent_thought_chunk",
                    &format!("\n[warning] {message}\n"),
                )]
            }
            _ => Vec::new(),
        }
    }

    /// Sub-agents: their calls and their own events.
    fn agent_updates(&mut self, msg: &EventMsg) -> Vec<Value> {
        match msg {
            EventMsg::CollabToolCall {
                tool,
                receiver_thread_ids,
                prompt,
                ..
            } => {
                let mut out = Vec::new();
                if tool == "spawn_agent" {
                    if let Some(task) = prompt {
                        for thread in receiver_thread_ids {
                            // The child's first events can overtake the spawn's (they come
                            // from its watcher, not the turn): its call then gets its title now.
                            if self.agents.contains_key(thread) {
                                out.push(update(&agent_call_id(thread), json!({"title": task})));
                            } else {
                                self.spawned.insert(*thread, task.clone());
                            }
                        }
                    }
                }
                out
            }
            EventMsg::AgentEvent {
                thread_id,
                task_path,
                msg,
            } => self.agent_event(thread_id, task_path, msg),
            _ => Vec::new(),
        }
    }

    /// The first event of a call is its `tool_call`; later ones update it.
    fn start_or_update(&mut self, call_id: &str, mut fields: Value) -> Value {
        if self.known.contains_key(call_id) {
            return update(call_id, fields);
        }
        self.known.insert(call_id.to_string(), String::new());
        if let Some(object) = fields.as_object_mut() {
            object.insert("sessionUpdate".into(), "tool_call".into());
            object.insert("toolCallId".into(), call_id.into());
        }
        fields
    }

    /// A sub-agent is one tool call titled with its task; its messages, commands and end
    /// show as that call's content and status.
    fn agent_event(&mut self, thread: &ThreadId, task_path: &str, msg: &EventMsg) -> Vec<Value> {
        let id = agent_call_id(thread);
        let mut out = Vec::new();
        if !self.agents.contains_key(thread) {
            let task = self
                .spawned
                .remove(thread)
                .unwrap_or_else(|| task_path.to_string());
            self.agents.insert(*thread, AgentCall::default());
            out.push(json!({
                "sessionUpdate": "tool_call",
                "toolCallId": id,
                "title": task,
                "kind": "think",
                "status": "in_progress",
                "rawInput": {"agent": thread.to_string(), "taskPath": task_path},
            }));
        }
        let agent = self.agents.entry(*thread).or_default();
        let line = match msg {
            EventMsg::AgentMessage { message } => Some(message.clone()),
            EventMsg::ExecCommandBegin {
                call_id, command, ..
            } => {
                agent.begun.insert(call_id.clone());
                Some(format!("$ {}", command_title(command)))
            }
            EventMsg::ExecCommandEnd {
                call_id, command, ..
            } if !agent.begun.remove(call_id) => Some(format!("$ {}", command_title(command))),
            EventMsg::PatchApplyEnd {
                changes, success, ..
            } => Some(format!(
                "{} ({})",
                patch_title(changes),
                if *success { "done" } else { "failed" }
            )),
            _ => None,
        };
        let status = match msg {
            EventMsg::TurnComplete { .. } => Some("completed"),
            EventMsg::TurnAborted { .. } | EventMsg::ShutdownComplete => Some("failed"),
            EventMsg::Error { fatal: true, .. } => Some("failed"),
            _ => None,
        };
        if let Some(line) = line {
            if agent.log.len() < AGENT_LOG_LIMIT {
                agent.log.push_str(&line);
                agent.log.push('\n');
            }
            out.push(update(&id, json!({"content": [text_content(&agent.log)]})));
        }
        if let Some(status) = status {
            out.push(update(&id, json!({"status": status})));
        }
        out
    }
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

/// The fields that stream `piece` to a command's terminal, `sent` bytes having gone before;
/// none once the terminal had its share.
fn terminal_piece(call_id: &str, sent: &mut usize, piece: &str) -> Option<Value> {
    let room = commands::TERMINAL_STREAM_LIMIT.saturating_sub(*sent);
    if room == 0 || piece.is_empty() {
        return None;
    }
    if piece.len() <= room {
        *sent += piece.len();
        return Some(commands::terminal_output(call_id, piece));
    }
    let mut cut = room;
    while !piece.is_char_boundary(cut) {
        cut -= 1;
    }
    *sent = commands::TERMINAL_STREAM_LIMIT;
    let data = format!("{}{}", &piece[..cut], commands::terminal_cut_notice());
    Some(commands::terminal_output(call_id, &data))
}

/// `extra`'s fields added to `fields` (both objects).
fn merge(fields: &mut Value, extra: Value) {
    if let (Some(fields), Value::Object(extra)) = (fields.as_object_mut(), extra) {
        fields.extend(extra);
    }
}

fn update(call_id: &str, mut fields: Value) -> Value {
    if let Some(object) = fields.as_object_mut() {
        object.insert("sessionUpdate".into(), "tool_call_update".into());
        object.insert("toolCallId".into(), call_id.into());
    }
    fields
}

fn text_content(text: &str) -> Value {
    json!({"type": "content", "content": {"type": "text", "text": text}})
}

/// A change as ACP's diff: whole texts for an added or deleted file; for an update, the
/// lines around the change (old and new) as Troupe's event carries them.
pub fn diff_content(change: &FileChange) -> Value {
    let path = change.move_path.as_ref().unwrap_or(&change.path);
    let (old, new) = match change.kind {
        FileChangeKind::Add => (None, change.diff.clone()),
        FileChangeKind::Delete => (Some(change.diff.clone()), String::new()),
        FileChangeKind::Update => {
            let (old, new) = split_unified(&change.diff);
            (Some(old), new)
        }
    };
    json!({"type": "diff", "path": path, "oldText": old, "newText": new})
}

/// The old and new sides of a unified diff's hunks (context on both).
pub fn split_unified(diff: &str) -> (String, String) {
    let (mut old, mut new) = (String::new(), String::new());
    for line in diff.lines() {
        if line.starts_with("---") || line.starts_with("+++") || line.starts_with("@@") {
            continue;
        }
        if let Some(rest) = line.strip_prefix('-') {
            old.push_str(rest);
            old.push('\n');
        } else if let Some(rest) = line.strip_prefix('+') {
            new.push_str(rest);
            new.push('\n');
        } else if let Some(rest) = line.strip_prefix(' ') {
            old.push_str(rest);
            old.push('\n');
            new.push_str(rest);
            new.push('\n');
        }
    }
    (old, new)
}

fn patch_title(changes: &[FileChange]) -> String {
    let names: Vec<String> = changes
        .iter()
        .map(|c| {
            c.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| c.path.display().to_string())
        })
        .collect();
    format!("Edit {}", names.join(", "))
}

fn tool_kind(tool: &str) -> &'static str {
    match tool {
        "update_plan" => "think",
        "view_image"
        | "read_mcp_resource"
        | "list_mcp_resources"
        | "list_mcp_resource_templates" => "read",
        "web_search" => "fetch",
        "write_stdin" | "exec_command" | "shell" => "execute",
        "apply_patch" => "edit",
        _ => "other",
    }
}

fn tool_title(tool: &str) -> String {
    match tool {
        "update_plan" => "Update plan".into(),
        "view_image" => "View image".into(),
        "web_search" => "Web search".into(),
        other => other.replace('_', " "),
    }
}

/// The model's plan, whole, as ACP's `plan` update.
pub fn plan_update(plan: &[PlanItem]) -> Value {
    let entries: Vec<Value> = plan
        .iter()
        .map(|item| {
            let status = match item.status {
                StepStatus::Pending => "pending",
                StepStatus::InProgress => "in_progress",
                StepStatus::Completed => "completed",
            };
            json!({"content": item.step, "priority": "medium", "status": status})
        })
        .collect();
    json!({"sessionUpdate": "plan", "entries": entries})
}

mod tools;

#[cfg(test)]
mod tests;
