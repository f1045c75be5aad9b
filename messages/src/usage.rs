//! Token accounting reported by the provider.

use serde::{Deserialize, Serialize};

/// Tokens of one response, or a running total of several.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens, including the cached ones.
    pub input_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache.
    pub cached_input_tokens: u64,
    /// Completion tokens, including reasoning.
    pub output_tokens: u64,
    /// Completion tokens spent on hidden reasoning.
    pub reasoning_output_tokens: u64,
    /// Total as the provider reported it.
    pub total_tokens: u64,
    /// Prompt tokens written into the provider's prompt cache (included in `input_tokens`),
    /// where the wire reports them (Anthropic's `cache_creation_input_tokens`); 0 elsewhere.
    /// Absent from rollouts written before it was counted (read as 0). Always written: the
    /// thread index stores usage in a format without field names.
    #[serde(default)]
    pub cache_write_input_tokens: u64,
}

impl TokenUsage {
    /// Adds another usage into this running total.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_output_tokens += other.reasoning_output_tokens;
        self.total_tokens += other.total_tokens;
        self.cache_write_input_tokens += other.cache_write_input_tokens;
    }
}
