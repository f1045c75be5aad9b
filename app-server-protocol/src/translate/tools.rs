//! The tool calls' events (commands, approvals, patches, MCP and other tool calls) →
//! their items and server requests: the part of [`Translator::on_event`] about calls.

use super::{to_value, Out, Translator};
use crate::items::{command_item, file_changes, mcp_item, tool_item, ToolEnd};
use crate::protocol::{ItemStatus, ThreadItem};
use troupe_messages::events::EventMsg;

impl Translator {
    /// A tool call's event (the others are `on_event`'s own: listed, so that a new event
    /// must be placed).
    #[allow(
        clippy::too_many_lines,
        reason = "one arm per tool-call event variant, each a few lines of wire item"
    )]
    pub(super) fn on_tool_event(&mut self, msg: &EventMsg, now_ms: i64, out: &mut Vec<Out>) {
        match msg {
            EventMsg::ExecCommandBegin {
                call_id,
                command,
                cwd,
                user_shell,
                ..
            } => {
                if *user_shell {
                    self.open_user_shell_turn(call_id, now_ms, out);
                }
                if let Some(turn) = self.turn.as_mut() {
                    turn.command_cwds.insert(call_id.clone(), cwd.clone());
                    turn.asked.remove(call_id);
                }
                out.extend(self.approval_resolved(call_id));
                let mut item = command_item(call_id, command, cwd, ItemStatus::InProgress);
                if *user_shell {
                    set_user_shell_source(&mut item);
                }
                out.push(self.started(&self.turn_id(), item, now_ms));
            }
            EventMsg::ExecCommandEnd {
                call_id,
                command,
                exit_code,
                aggregated_output,
                duration_ms,
                timed_out,
                user_shell,
            } => {
                // Replayed from a rollout, the user's command has no begin: its turn opens
                // here.
                let began = self.turn.as_ref().is_some_and(|t| {
                    t.command_cwds.contains_key(call_id) || t.streamed.contains(call_id)
                });
                if *user_shell && !began {
                    self.open_user_shell_turn(call_id, now_ms, out);
                    let cwd = std::path::PathBuf::new();
                    let mut item = command_item(call_id, command, &cwd, ItemStatus::InProgress);
                    set_user_shell_source(&mut item);
                    out.push(self.started(&self.turn_id(), item, now_ms));
                }
                out.extend(self.approval_resolved(call_id));
                if let Some(turn) = self.turn.as_mut() {
                    turn.asked.remove(call_id);
                }
                // A command whose output was not streamed (a PTY session, a rollout being
                // replayed) gets it as one delta before its item.
                let streamed = self
                    .turn
                    .as_mut()
                    .is_some_and(|t| t.streamed.remove(call_id));
                if !streamed && !aggregated_output.is_empty() {
                    out.push(self.delta(
                        "item/commandExecution/outputDelta",
                        call_id,
                        aggregated_output,
                    ));
                }
                let status = match exit_code {
                    Some(0) => ItemStatus::Completed,
                    _ => ItemStatus::Failed,
                };
                let cwd = self
                    .turn
                    .as_mut()
                    .and_then(|t| t.command_cwds.remove(call_id))
                    .unwrap_or_default();
                let mut item = command_item(call_id, command, &cwd, status);
                if let ThreadItem::CommandExecution {
                    aggregated_output: out_field,
                    exit_code: code,
                    duration_ms: duration,
                    ..
                } = &mut item
                {
                    *out_field = Some(aggregated_output.clone());
                    *code = *exit_code;
                    *duration = Some(i64::try_from(*duration_ms).unwrap_or(i64::MAX));
                }
                if *user_shell {
                    set_user_shell_source(&mut item);
                }
                out.push(self.completed(item, now_ms));
                if *user_shell {
                    let interrupted = exit_code.is_none() && !*timed_out;
                    out.extend(self.close_user_shell_turn(call_id, interrupted, now_ms));
                }
            }
            EventMsg::ExecCommandOutputDelta { call_id, chunk, .. } => {
                if let Some(turn) = self.turn.as_mut() {
                    turn.streamed.insert(call_id.clone());
                }
                out.push(self.delta("item/commandExecution/outputDelta", call_id, chunk));
            }
            EventMsg::ExecApprovalRequest {
                call_id,
                command,
                cwd,
                reason,
                ..
            } => {
                self.waiting.insert(call_id.clone());
                if let Some(turn) = self.turn.as_mut() {
                    turn.asked
                        .insert(call_id.clone(), (command.clone(), cwd.clone()));
                }
                out.push(self.status_changed());
                let params = crate::items::command_approval(
                    self.thread_id.clone(),
                    self.turn_id(),
                    call_id,
                    command,
                    cwd,
                    reason.clone(),
                    now_ms,
                );
                out.push(Out::Ask {
                    agent: None,
                    method: "item/commandExecution/requestApproval",
                    call_id: call_id.clone(),
                    params: to_value(&params),
                });
            }
            EventMsg::ApplyPatchApprovalRequest {
                call_id, reason, ..
            } => {
                self.waiting.insert(call_id.clone());
                out.push(self.status_changed());
                out.push(Out::Ask {
                    agent: None,
                    method: "item/fileChange/requestApproval",
                    call_id: call_id.clone(),
                    params: to_value(&crate::protocol::FileChangeRequestApprovalParams {
                        thread_id: self.thread_id.clone(),
                        turn_id: self.turn_id(),
                        item_id: call_id.clone(),
                        started_at_ms: now_ms,
                        reason: reason.clone(),
                        grant_root: None,
                    }),
                });
            }
            EventMsg::ToolCallBegin { call_id, tool_name } => {
                self.tool_began(call_id, now_ms);
                let item = tool_item(call_id, tool_name, None, None);
                out.push(self.started(&self.turn_id(), item, now_ms));
            }
            EventMsg::McpToolCallBegin {
                call_id,
                server,
                tool,
                arguments,
                ..
            } => {
                self.tool_began(call_id, now_ms);
                let item = mcp_item(call_id, server, tool, arguments, None);
                out.push(self.started(&self.turn_id(), item, now_ms));
            }
            EventMsg::ToolCallEnd {
                call_id,
                tool_name,
                success,
                output,
            } => {
                let duration_ms = self.tool_duration(call_id, now_ms);
                let end = (*success, output.as_str(), duration_ms);
                let item = tool_item(call_id, tool_name, None, Some(end));
                out.push(self.completed(item, now_ms));
            }
            EventMsg::McpToolCallEnd {
                call_id,
                server,
                tool,
                arguments,
                result,
                error,
                success,
                ..
            } => {
                let end = ToolEnd {
                    success: *success,
                    result: result.as_ref(),
                    error: error.as_deref(),
                    duration_ms: self.tool_duration(call_id, now_ms),
                };
                let item = mcp_item(call_id, server, tool, arguments, Some(end));
                out.push(self.completed(item, now_ms));
            }
            EventMsg::PatchApplyBegin { call_id, changes } => {
                out.extend(self.approval_resolved(call_id));
                let item = ThreadItem::FileChange {
                    id: call_id.clone(),
                    changes: file_changes(changes),
                    status: ItemStatus::InProgress,
                };
                out.push(self.started(&self.turn_id(), item, now_ms));
            }
            EventMsg::PatchApplyEnd {
                call_id,
                changes,
                success,
                output,
            } => {
                out.extend(self.approval_resolved(call_id));
                if !output.is_empty() {
                    out.push(self.delta("item/fileChange/outputDelta", call_id, output));
                }
                let item = ThreadItem::FileChange {
                    id: call_id.clone(),
                    changes: file_changes(changes),
                    status: if *success {
                        ItemStatus::Completed
                    } else {
                        ItemStatus::Failed
                    },
                };
                out.push(self.completed(item, now_ms));
            }
            EventMsg::TurnStarted { .. }
            | EventMsg::InputInjected { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentMessage { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::AgentReasoning { .. }
            | EventMsg::PlanUpdated { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::StreamRetry { .. }
            | EventMsg::Error { .. }
            | EventMsg::TurnComplete { .. }
            | EventMsg::TurnAborted { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::Warning { .. }
            | EventMsg::SessionConfigured { .. }
            | EventMsg::ShutdownComplete
            | EventMsg::CollabToolCall { .. }
            | EventMsg::AgentEvent { .. }
            | EventMsg::PermissionsGranted { .. }
            | EventMsg::HookStarted { .. }
            | EventMsg::HookCompleted { .. }
            | EventMsg::GoalUpdated { .. }
            | EventMsg::RequestUserInput { .. } => {}
        }
    }
}

/// The user's own command (`thread/shellCommand`, the TUI's `!cmd`): Codex's `userShell`.
fn set_user_shell_source(item: &mut ThreadItem) {
    if let ThreadItem::CommandExecution { source, .. } = item {
        *source = "userShell".into();
    }
}
