//! What asks the user (approvals, questions) and what acts beside the turn (hooks,
//! goals, sub-agents).

use super::*;

impl ThreadView {
    /// Approvals and questions, granted permissions, hooks, goals and sub-agent calls.
    pub(super) fn on_request_or_agent(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::ExecApprovalRequest { command, .. } => {
                self.status = ThreadStatus::WaitingApproval;
                self.activity = format!("approve? $ {}", crate::command_line(command));
            }
            EventMsg::ApplyPatchApprovalRequest { files, .. } => {
                self.status = ThreadStatus::WaitingApproval;
                self.activity = format!("approve? patch to {} file(s)", files.len());
            }
            EventMsg::RequestUserInput { questions, .. } => {
                self.activity = format!("answer? {} question(s)", questions.len());
            }
            EventMsg::PermissionsGranted {
                scope, permissions, ..
            } => self.notice(
                NoticeKind::Info,
                format!(
                    "permissions granted for the {}: {}",
                    scope.as_str(),
                    permissions.summary()
                ),
            ),
            EventMsg::HookStarted {
                event_name,
                command,
                ..
            } => {
                self.activity = format!("hook {} · {command}", event_name.as_str());
            }
            // A hook that changed the flow (or failed) is worth a line; a silent one is not.
            EventMsg::HookCompleted {
                event_name,
                command,
                duration_ms,
                decision,
                message,
                ..
            } => {
                let kind = match decision {
                    HookDecision::None => None,
                    HookDecision::Allow => Some(NoticeKind::Info),
                    HookDecision::Block | HookDecision::Deny => Some(NoticeKind::Warning),
                    HookDecision::Failed => Some(NoticeKind::Error),
                };
                if let Some(kind) = kind {
                    let reason = message.as_deref().unwrap_or("");
                    self.notice(
                        kind,
                        format!(
                            "hook {} {} ({duration_ms} ms): {command} {reason}",
                            event_name.as_str(),
                            decision.as_str()
                        ),
                    );
                }
            }
            EventMsg::GoalUpdated { goal, continuing } => {
                let next = if *continuing { ", continuing" } else { "" };
                self.notice(
                    NoticeKind::Info,
                    format!(
                        "goal {}: {} ({} tokens used{next})",
                        goal.status.as_str(),
                        goal.objective,
                        goal.tokens_used
                    ),
                );
            }
            EventMsg::CollabToolCall {
                call_id,
                tool,
                receiver_thread_ids,
                prompt,
                status,
                ..
            } => {
                self.activity = tool.clone();
                let targets = receiver_thread_ids
                    .iter()
                    .map(|id| agent_id(&id.to_string()))
                    .collect();
                let cell = Cell::Agent {
                    tool: tool.clone(),
                    targets,
                    prompt: prompt.clone(),
                    status: *status,
                };
                let index = self.live.iter().position(|c| matches!(c, Cell::Agent { tool: t, status: CollabCallStatus::InProgress, .. } if t == tool));
                let _ = call_id;
                match (index, status) {
                    (Some(index), CollabCallStatus::InProgress) => self.live[index] = cell,
                    (None, CollabCallStatus::InProgress) => self.live.push(cell),
                    (Some(index), _) => {
                        self.live[index] = cell;
                        self.finish(index);
                    }
                    (None, _) => self.push(cell),
                }
            }
            _ => {}
        }
    }
}
