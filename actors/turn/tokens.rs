//! Token accounting: what the provider reported plus a local estimate of what it has not yet
//! seen, the model's context window, and when to compact.

use troupe_messages::items::{FunctionOutput, ResponseItem};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::ToolSpec;
use troupe_messages::usage::TokenUsage;

/// Share of the context window at which compaction starts when config sets no limit.
const AUTO_COMPACT_SHARE: (u64, u64) = (9, 10);

/// Tokens an image is counted as: what providers bill for a large one, not the size of its
/// base64 text (which would make one screenshot look like a full context window).
const IMAGE_TOKENS: u64 = 1_500;

/// A rough token count of an item: its JSON size / 4, as providers average ~4 bytes a token;
/// parts of an item holding images are counted one by one, each image as `IMAGE_TOKENS`.
pub fn estimate_item(item: &ResponseItem) -> u64 {
    let parts = match item {
        ResponseItem::Message { content, .. } => Some(content.as_slice()),
        ResponseItem::FunctionCallOutput {
            output: FunctionOutput::Content(parts),
            ..
        } => Some(parts.as_slice()),
        _ => None,
    };
    if let Some(parts) = parts.filter(|parts| parts.iter().any(|p| p.text().is_none())) {
        return parts
            .iter()
            .map(|part| part.text().map_or(IMAGE_TOKENS, |t| t.len() as u64 / 4))
            .sum::<u64>()
            .max(1);
    }
    serde_json::to_vec(item)
        .map(|bytes| bytes.len() as u64 / 4)
        .unwrap_or(0)
        .max(1)
}

/// Context window of known model families (tokens); the table lives with config, which
/// checks a configured limit against it.
pub fn builtin_context_window(model: &str) -> Option<u64> {
    troupe_config::limits::builtin_context_window(model)
}

/// The window in force: config first, then the table.
pub fn context_window(settings: &SessionSettings) -> Option<u64> {
    settings
        .context
        .model_context_window
        .or_else(|| builtin_context_window(&settings.model))
}

/// Tokens at which the thread is compacted, if any.
pub fn auto_compact_limit(settings: &SessionSettings) -> Option<u64> {
    settings.context.auto_compact_token_limit.or_else(|| {
        context_window(settings).map(|w| w * AUTO_COMPACT_SHARE.0 / AUTO_COMPACT_SHARE.1)
    })
}

/// The most the history may hold before it must be compacted: the compaction limit, never
/// above the window (runtime settings do not all come through config validation).
pub fn effective_limit(settings: &SessionSettings) -> Option<u64> {
    match (auto_compact_limit(settings), context_window(settings)) {
        (Some(limit), Some(window)) => Some(limit.min(window)),
        (limit, window) => limit.or(window),
    }
}

/// Tokens every request carries besides the history: the instructions and the tool specs.
pub fn request_overhead(instructions: &str, tools: &[ToolSpec]) -> u64 {
    let tools = serde_json::to_vec(tools).map(|b| b.len()).unwrap_or(0);
    ((instructions.len() + tools) / 4) as u64
}

/// Running count of the tokens the next request will carry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenTracker {
    /// Input + output tokens of the last response, as the provider counted them.
    reported: Option<u64>,
    /// Estimate of items added since that report.
    since_report: u64,
    /// Estimate of the whole history (used until the provider reports).
    local_total: u64,
}

impl TokenTracker {
    /// A tracker for an existing history.
    pub fn for_history(history: &[ResponseItem]) -> Self {
        Self {
            reported: None,
            since_report: 0,
            local_total: history.iter().map(estimate_item).sum(),
        }
    }

    pub fn on_item(&mut self, item: &ResponseItem) {
        let tokens = estimate_item(item);
        self.since_report += tokens;
        self.local_total += tokens;
    }

    /// A response finished: its input already covers everything before its output items.
    pub fn on_usage(&mut self, usage: &TokenUsage) {
        self.reported = Some(usage.input_tokens + usage.output_tokens);
        self.since_report = 0;
    }

    /// Best estimate of the next request's size.
    pub fn current(&self) -> u64 {
        match self.reported {
            Some(reported) => reported + self.since_report,
            None => self.local_total,
        }
    }

    /// Whether the count comes from the provider (which includes instructions and tools).
    pub fn is_reported(&self) -> bool {
        self.reported.is_some()
    }

    /// Whether `limit` is reached.
    pub fn over(&self, limit: Option<u64>) -> bool {
        limit.is_some_and(|limit| self.current() >= limit)
    }
}
