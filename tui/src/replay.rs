//! A recorded thread's transcript rebuilt from its rollout, so `troupe resume` (and /resume,
//! /fork, "edit a previous message") show the conversation before the composer. The rollout
//! holds the history items and every finished event (deltas aside): the events go through
//! the same [`ThreadView::apply`] as live ones, and each turn's own message (the last user
//! item before its start) becomes a user cell.

use crate::thread_view::ThreadView;
use std::path::Path;
use std::time::{Duration, Instant};
use troupe_actors::rollout_recorder::loader;
use troupe_messages::agent_notice::{parse_report, task_of_first_message};
use troupe_messages::events::EventMsg;
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::rollout::{RolloutLine, RolloutRecord};

/// Cells of a replayed transcript written on screen at most (the newest); the rest stays in
/// the rollout.
pub const REPLAY_CELLS: usize = 200;

/// Loads the rollout at `path` and replays it into a new view (blocking: call it off the
/// event loop).
pub fn load(path: &Path, now: Instant) -> Result<ThreadView, String> {
    let loaded = loader::load(path).map_err(|err| err.to_string())?;
    Ok(replay(&loaded.lines, now))
}

/// The view `lines` describe. Timestamps keep the turns' durations; a line without a
/// readable one counts as the previous line's time.
pub fn replay(lines: &[RolloutLine], now: Instant) -> ThreadView {
    let mut view = ThreadView::new(now);
    let mut first_ms: Option<i64> = None;
    let mut at = now;
    let mut turn_input: Option<String> = None;
    for line in lines {
        if let Some(ms) = timestamp_ms(&line.timestamp) {
            let first = *first_ms.get_or_insert(ms);
            at = now + Duration::from_millis(ms.saturating_sub(first).max(0) as u64);
        }
        match &line.record {
            RolloutRecord::ResponseItem(item) => {
                if let Some(text) = user_text(item) {
                    // A sub-agent's report waiting for the next turn was not typed; a
                    // sub-agent's first message shows its task, not its place in the tree.
                    if parse_report(&text).is_none() {
                        turn_input = Some(task_of_first_message(&text).to_string());
                    }
                }
            }
            // Context updates and skill bodies come before a turn's own message.
            RolloutRecord::TurnContext(_) => turn_input = None,
            RolloutRecord::Event(msg) => {
                if let EventMsg::TurnStarted { .. } = msg {
                    // Shown as typed; the start that follows records it as this turn's prompt.
                    if let Some(text) = turn_input.take() {
                        view.user_message(text);
                    }
                }
                if replayable(msg) {
                    view.apply(msg, at);
                }
            }
            RolloutRecord::SessionMeta(_) | RolloutRecord::Compacted(_) => {}
        }
    }
    view.settle();
    view
}

/// Events that only mean something live: an old approval request is not pending any more.
fn replayable(msg: &EventMsg) -> bool {
    !matches!(
        msg,
        EventMsg::ExecApprovalRequest { .. }
            | EventMsg::ApplyPatchApprovalRequest { .. }
            | EventMsg::SessionConfigured { .. }
    )
}

/// The text of a user message, its parts joined.
fn user_text(item: &ResponseItem) -> Option<String> {
    match item {
        ResponseItem::Message {
            role: Role::User,
            content,
            ..
        } => {
            let text: Vec<&str> = content.iter().filter_map(ContentItem::text).collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

/// Milliseconds since the epoch of an RFC 3339 timestamp.
fn timestamp_ms(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
