//! One model request and what the sampler reports while serving it.

use crate::errors::ModelError;
use crate::items::ResponseItem;
use crate::tools::ToolSpec;
use crate::usage::TokenUsage;
use serde::{Deserialize, Serialize};

/// A complete request to the model: the frozen prompt of one sampling step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub model: String,
    pub instructions: String,
    pub input: Vec<ResponseItem>,
    pub tools: Vec<ToolSpec>,
    pub parallel_tool_calls: bool,
    /// Keeps the provider's prompt cache on one thread.
    pub prompt_cache_key: String,
    /// `reasoning.effort` when the config sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// `text.verbosity` (`model_verbosity`), Responses wire only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<String>,
    /// A JSON Schema the final answer must follow, sent as `text.format` (Responses) or
    /// `response_format` (Chat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
}

/// What the sampler tells its turn about the request it serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplerUpdate {
    /// Assistant text as it streams.
    TextDelta { delta: String },
    /// Reasoning summary text as it streams.
    ReasoningDelta { delta: String },
    /// A retry is scheduled; deltas streamed so far are void.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
    },
    /// The response finished: its output items, in order, and its usage.
    Completed {
        items: Vec<ResponseItem>,
        usage: TokenUsage,
    },
    /// The request failed for good.
    Failed { error: ModelError },
}
