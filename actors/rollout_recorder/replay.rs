//! Rebuilding a thread's state from its rollout lines: the history exactly as the model saw
//! it (compactions applied), the turn count, token totals, title and status.

use crate::turn::compact::apply_parts;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::goals::ThreadGoal;
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::permissions::{GrantScope, PermissionGrants};
use troupe_messages::rollout::{CompactedRecord, RolloutLine, RolloutRecord};
use troupe_messages::settings::SessionSettings;
use troupe_messages::threads::ThreadStatus;
use troupe_messages::usage::TokenUsage;

/// Longest title kept, in characters.
const TITLE_CHARS: usize = 80;

/// What a rollout says about its thread, besides the history. Kept up to date by a live
/// session line by line, and rebuilt by [`replay`]: both go through [`Tracker::apply`], so the
/// index a session writes and the one rebuilt from its file agree.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracker {
    /// Highest turn number started.
    pub turns: u64,
    /// Settings of the last turn.
    pub last_settings: Option<Box<SessionSettings>>,
    /// Token totals after the last response.
    pub tokens: TokenUsage,
    /// The message the user started the first turn with, shortened to one line.
    pub title: String,
    pub status: ThreadStatus,
    /// The thread's goal as last recorded (`GoalUpdated`); restored on resume.
    pub goal: Option<ThreadGoal>,
    /// The last user message since the last turn context: a turn's own input comes last,
    /// after context updates and skill bodies (the initial context comes before any turn).
    pending_user: Option<String>,
    /// Permissions granted for the session (`request_permissions`), added up: a resumed
    /// thread keeps them.
    pub session_grants: PermissionGrants,
}

impl Default for Tracker {
    fn default() -> Self {
        Self {
            turns: 0,
            last_settings: None,
            tokens: TokenUsage::default(),
            title: String::new(),
            status: ThreadStatus::New,
            goal: None,
            pending_user: None,
            session_grants: PermissionGrants::default(),
        }
    }
}

impl Tracker {
    /// Takes one record into account (history aside).
    pub fn apply(&mut self, record: &RolloutRecord) {
        match record {
            RolloutRecord::SessionMeta(_) | RolloutRecord::Compacted(_) => {}
            RolloutRecord::ResponseItem(item) => {
                if let Some(text) = user_text(item) {
                    self.pending_user = Some(text);
                }
            }
            RolloutRecord::TurnContext(context) => {
                self.pending_user = None;
                self.turns = self.turns.max(context.turn_id.0);
                self.last_settings = Some(context.settings.clone());
            }
            RolloutRecord::Event(event) => match event {
                EventMsg::TurnStarted { .. } => {
                    self.status = ThreadStatus::Incomplete;
                    if self.title.is_empty() {
                        if let Some(text) = self.pending_user.take() {
                            // A sub-agent is titled by its task, not by the line that tells
                            // it where it sits in the tree.
                            let task = troupe_messages::agent_notice::task_of_first_message(&text);
                            self.title = title_of(task);
                        }
                    }
                }
                EventMsg::TurnComplete { .. } => self.status = ThreadStatus::Completed,
                EventMsg::TurnAborted { reason, .. } => {
                    self.status = match reason {
                        AbortReason::Failed => ThreadStatus::Failed,
                        AbortReason::Interrupted | AbortReason::Shutdown => {
                            ThreadStatus::Interrupted
                        }
                    }
                }
                EventMsg::TokenCount { total, .. } => self.tokens = *total,
                EventMsg::PermissionsGranted {
                    scope, permissions, ..
                } => {
                    if *scope == GrantScope::Session {
                        self.session_grants.add(permissions);
                    }
                }
                EventMsg::GoalUpdated { goal, .. } => self.goal = Some(goal.clone()),
                // The rest does not change a thread's summary (its items carry the history).
                EventMsg::SessionConfigured { .. }
                | EventMsg::InputInjected { .. }
                | EventMsg::AgentMessageDelta { .. }
                | EventMsg::AgentMessage { .. }
                | EventMsg::AgentReasoningDelta { .. }
                | EventMsg::AgentReasoning { .. }
                | EventMsg::ExecCommandBegin { .. }
                | EventMsg::ExecCommandEnd { .. }
                | EventMsg::ExecApprovalRequest { .. }
                | EventMsg::ApplyPatchApprovalRequest { .. }
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
                | EventMsg::StreamRetry { .. }
                | EventMsg::Warning { .. }
                | EventMsg::Error { .. }
                | EventMsg::AgentEvent { .. }
                | EventMsg::CollabToolCall { .. }
                | EventMsg::ExecCommandOutputDelta { .. }
                | EventMsg::ShutdownComplete
                | EventMsg::HookStarted { .. }
                | EventMsg::HookCompleted { .. }
                | EventMsg::RequestUserInput { .. } => {}
            },
        }
    }
}

/// A thread rebuilt from its rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    /// The history exactly as the model saw it, compactions applied.
    pub history: Vec<ResponseItem>,
    pub tracker: Tracker,
    /// Compactions that could not be applied (the history is then not exact): a resume
    /// refuses such a thread, listing and forking still work.
    pub errors: Vec<String>,
}

/// Replays `lines` (everything after the session meta) in order.
pub fn replay(lines: &[RolloutLine]) -> Replayed {
    let mut out = Replayed {
        history: Vec::new(),
        tracker: Tracker::default(),
        errors: Vec::new(),
    };
    for (index, line) in lines.iter().enumerate() {
        out.tracker.apply(&line.record);
        match &line.record {
            RolloutRecord::ResponseItem(item) => out.history.push(item.clone()),
            RolloutRecord::Compacted(compacted) => {
                match replaced_history(&out.history, compacted) {
                    Ok(history) => out.history = history,
                    // Line numbers count the session meta line, as the loader's warnings do.
                    Err(why) => out.errors.push(format!(
                        "line {}: compaction cannot be replayed: {why}",
                        index + 2
                    )),
                }
            }
            RolloutRecord::SessionMeta(_)
            | RolloutRecord::TurnContext(_)
            | RolloutRecord::Event(_) => {}
        }
    }
    out
}

/// The history after `compacted`, applied to `before`.
fn replaced_history(
    before: &[ResponseItem],
    compacted: &CompactedRecord,
) -> Result<Vec<ResponseItem>, String> {
    match (&compacted.parts, &compacted.replacement_history) {
        (Some(parts), _) => apply_parts(before, parts).map_err(|err| err.to_string()),
        (None, Some(history)) => Ok(history.clone()),
        (None, None) => Err("it holds neither `parts` nor `replacement_history`".into()),
    }
}

/// Tool calls in `history` that have no output: (call id, custom tool?).
pub fn dangling_calls(history: &[ResponseItem]) -> Vec<(String, bool)> {
    let answered: std::collections::HashSet<&str> = history
        .iter()
        .filter_map(|item| match item {
            ResponseItem::FunctionCallOutput { call_id, .. }
            | ResponseItem::CustomToolCallOutput { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    history
        .iter()
        .filter_map(|item| match item {
            ResponseItem::FunctionCall { call_id, .. } if !answered.contains(call_id.as_str()) => {
                Some((call_id.clone(), false))
            }
            ResponseItem::CustomToolCall { call_id, .. }
                if !answered.contains(call_id.as_str()) =>
            {
                Some((call_id.clone(), true))
            }
            _ => None,
        })
        .collect()
}

fn user_text(item: &ResponseItem) -> Option<String> {
    match item {
        ResponseItem::Message {
            role: Role::User,
            content,
            ..
        } => Some(
            content
                .iter()
                .filter_map(ContentItem::text)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// One line of at most [`TITLE_CHARS`] characters.
pub fn title_of(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= TITLE_CHARS {
        return flat;
    }
    let mut short: String = flat.chars().take(TITLE_CHARS - 1).collect();
    short.push('…');
    short
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
