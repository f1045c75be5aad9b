//! A sub-agent's approval requests, relayed to the root of its tree: the root's clients get
//! them as server requests naming the sub-agent's thread (`threadId`), and their answers go
//! back through the root to the agent. The sub-agent's own watchers do not ask them again, so
//! each request is asked once, wherever it is seen.

use super::{to_value, turn_wire_id, Out, Translator};
use crate::protocol::{FileChangeRequestApprovalParams, ThreadItem};
use troupe_messages::agent_notice::parse_report;
use troupe_messages::agents::AgentStatus;
use troupe_messages::events::EventMsg;

impl Translator {
    /// A sub-agent's report that entered this thread's history, as the item clients show:
    /// `None` when `text` is not one (it is the user's).
    pub(crate) fn agent_report(&mut self, text: &str) -> Option<ThreadItem> {
        let report = parse_report(text)?;
        let kind = match report.status {
            AgentStatus::Interrupted => "interrupted",
            _ => "completed",
        };
        Some(ThreadItem::SubAgentActivity {
            id: self.item_id("agent"),
            kind: kind.into(),
            agent_thread_id: report.thread_id,
            agent_path: report.path,
            model: None,
            reasoning_effort: None,
            agent_nickname: Some(report.nickname),
            status: Some(report.status.as_str().into()),
            message: Some(report.answer),
        })
    }

    /// One relayed event of sub-agent `thread_id` (at `task_path` in the tree).
    pub(super) fn agent_event(
        &mut self,
        thread_id: &str,
        task_path: &str,
        msg: &EventMsg,
        now_ms: i64,
    ) -> Vec<Out> {
        let agent_turn = self.agent_turns.get(thread_id).cloned().unwrap_or_default();
        match msg {
            EventMsg::TurnStarted { turn_id } => {
                self.agent_turns
                    .insert(thread_id.to_string(), turn_wire_id(thread_id, *turn_id));
                Vec::new()
            }
            EventMsg::TurnComplete { .. } | EventMsg::TurnAborted { .. } => {
                self.agent_turns.remove(thread_id);
                vec![Out::AgentTurnEnded {
                    thread_id: thread_id.to_string(),
                }]
            }
            EventMsg::ExecApprovalRequest {
                call_id,
                command,
                cwd,
                reason,
                ..
            } => {
                let mut params = crate::items::command_approval(
                    thread_id.to_string(),
                    agent_turn,
                    call_id,
                    command,
                    cwd,
                    reason.clone(),
                    now_ms,
                );
                params.reason = Some(with_asker(task_path, params.reason.as_deref()));
                vec![Out::Ask {
                    method: "item/commandExecution/requestApproval",
                    call_id: call_id.clone(),
                    params: to_value(&params),
                    agent: Some(thread_id.to_string()),
                }]
            }
            EventMsg::ApplyPatchApprovalRequest {
                call_id, reason, ..
            } => {
                let params = FileChangeRequestApprovalParams {
                    thread_id: thread_id.to_string(),
                    turn_id: agent_turn,
                    item_id: call_id.clone(),
                    started_at_ms: now_ms,
                    reason: Some(with_asker(task_path, reason.as_deref())),
                    grant_root: None,
                };
                vec![Out::Ask {
                    method: "item/fileChange/requestApproval",
                    call_id: call_id.clone(),
                    params: to_value(&params),
                    agent: Some(thread_id.to_string()),
                }]
            }
            _ => Vec::new(),
        }
    }
}

/// The reason a client shows, led by who asks: a client that knows nothing of sub-agents
/// still tells the user which agent wants it.
fn with_asker(task_path: &str, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("agent {task_path}: {reason}"),
        None => format!("agent {task_path} asks"),
    }
}
