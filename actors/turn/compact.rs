//! Compaction (pure part): the summary request, and the history that replaces the old one —
//! initial context, recent user messages (bounded), the summary, and the latest user message
//! last, so the user's current request stays the last thing the model reads.

use super::tokens::estimate_item;
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::rollout::HistoryPart;

/// Asks the model for a hand-off summary of the conversation so far.
pub const SUMMARY_PROMPT: &str = "Context checkpoint: the conversation is about to be \
compacted and you will continue from a summary instead of the full history. Write that \
summary now, for yourself. Include: the user's goal and constraints, decisions made and why, \
what has been done (files changed, commands run and their results), what is in progress, and \
the exact next steps. Keep names, paths, errors and numbers precise. Do not call tools.";

/// Starts the summary message in the compacted history.
pub const SUMMARY_PREFIX: &str = "Summary of the conversation so far (earlier messages were \
compacted to save context):\n\n";

/// Budget of earlier user messages kept verbatim after compaction, in tokens.
pub const KEPT_USER_MESSAGES_TOKENS: u64 = 20_000;

/// The input of the summary request: the history plus the summary prompt.
pub fn summary_request_input(history: &[ResponseItem]) -> Vec<ResponseItem> {
    let mut input = history.to_vec();
    input.push(ResponseItem::user_text(SUMMARY_PROMPT));
    input
}

/// Whether an item is something the user typed (not injected context or a summary).
pub fn is_user_input(item: &ResponseItem) -> bool {
    let ResponseItem::Message {
        role: Role::User,
        content,
        ..
    } = item
    else {
        return false;
    };
    let first = content.first().and_then(ContentItem::text);
    !first.is_some_and(|text| {
        text.starts_with("<environment_context>")
            || text.starts_with("# AGENTS.md instructions")
            || text.starts_with(SUMMARY_PREFIX)
            || text.starts_with("<skill name=")
            || text == SUMMARY_PROMPT
    })
}

/// Where the latest user message goes relative to the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatestRequest {
    /// A request is being worked on: it stays the last thing the model reads.
    AfterSummary,
    /// Nothing is pending (`/compact` between turns): the summary comes last.
    BeforeSummary,
}

/// The history after compaction. `history` is the full current history (it starts with
/// `initial`).
pub fn compacted_history(
    initial: &[ResponseItem],
    history: &[ResponseItem],
    summary: &str,
    latest: LatestRequest,
) -> Vec<ResponseItem> {
    let parts = compaction_parts(initial, history, summary, latest);
    // The parts only point into `history`: applying them cannot fail.
    apply_parts(history, &parts).unwrap_or_default()
}

/// The history after compaction, as parts of `history` (how the rollout records it): the
/// initial context, recent user messages within [`KEPT_USER_MESSAGES_TOKENS`], the summary,
/// and the latest user message when a request is being worked on.
pub fn compaction_parts(
    initial: &[ResponseItem],
    history: &[ResponseItem],
    summary: &str,
    latest: LatestRequest,
) -> Vec<HistoryPart> {
    let mut parts = Vec::new();
    let skip = if history.starts_with(initial) {
        if !initial.is_empty() {
            parts.push(HistoryPart::Kept {
                start: 0,
                count: initial.len(),
            });
        }
        initial.len()
    } else {
        // Not expected (the initial context is never rewritten); kept verbatim all the same.
        parts.extend(
            initial
                .iter()
                .map(|item| HistoryPart::New { item: item.clone() }),
        );
        0
    };
    let user_inputs: Vec<usize> = (skip..history.len())
        .filter(|&i| is_user_input(&history[i]))
        .collect();
    let (last, earlier) = match (latest, user_inputs.split_last()) {
        (LatestRequest::AfterSummary, Some((last, earlier))) => (Some(*last), earlier),
        (LatestRequest::AfterSummary, None) => (None, &[][..]),
        (LatestRequest::BeforeSummary, _) => (None, &user_inputs[..]),
    };
    let mut kept = Vec::new();
    let mut budget = KEPT_USER_MESSAGES_TOKENS;
    for &index in earlier.iter().rev() {
        let cost = estimate_item(&history[index]);
        if cost > budget {
            break;
        }
        budget -= cost;
        kept.push(index);
    }
    kept.reverse();
    parts.extend(
        kept.into_iter()
            .map(|start| HistoryPart::Kept { start, count: 1 }),
    );
    parts.push(HistoryPart::New {
        item: ResponseItem::user_text(format!("{SUMMARY_PREFIX}{summary}")),
    });
    parts.extend(last.map(|start| HistoryPart::Kept { start, count: 1 }));
    parts
}

/// A part that points outside the history it is applied to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a compaction keeps items {start}..{end} of a history of {len} items")]
pub struct PartOutOfRange {
    pub start: usize,
    pub end: usize,
    pub len: usize,
}

/// Builds the history `parts` describe from the history they replace.
pub fn apply_parts(
    before: &[ResponseItem],
    parts: &[HistoryPart],
) -> Result<Vec<ResponseItem>, PartOutOfRange> {
    let mut out = Vec::new();
    for part in parts {
        match part {
            HistoryPart::Kept { start, count } => {
                let end = start.saturating_add(*count);
                let kept = before.get(*start..end).ok_or(PartOutOfRange {
                    start: *start,
                    end,
                    len: before.len(),
                })?;
                out.extend_from_slice(kept);
            }
            HistoryPart::New { item } => out.push(item.clone()),
        }
    }
    Ok(out)
}
