//! Chat Completions stream → response items. Text and reasoning stream as deltas; tool calls
//! are assembled by `index` from their pieces (id and name first, then argument fragments,
//! possibly interleaved across calls) and only become items at `[DONE]`, once checked:
//! no index skipped, every call named, arguments complete. A check that fails makes the
//! attempt a stream error (retried), so nothing half-received is recorded.

use crate::sampler::history::{assembled_call, custom_tool_names, CHAT_REASONING_ID_PREFIX};
use crate::sampler::sse::{classify_code, BadEvent, StreamEvent};
use crate::sampler::wire::protocol_error;
use serde_json::Value;
use std::collections::BTreeMap;
use troupe_messages::errors::ModelError;
use troupe_messages::items::{ContentItem, ReasoningSummary, ResponseItem, Role};
use troupe_messages::tools::ToolSpec;
use troupe_messages::usage::TokenUsage;

/// A tool call being assembled from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// State of one attempt's Chat stream.
#[derive(Debug)]
pub struct ChatDecoder {
    custom_tools: Vec<String>,
    text: String,
    reasoning: String,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    usage: Option<TokenUsage>,
    finished: bool,
}

impl ChatDecoder {
    pub fn new(tools: &[ToolSpec]) -> Self {
        ChatDecoder {
            custom_tools: custom_tool_names(tools),
            text: String::new(),
            reasoning: String::new(),
            calls: BTreeMap::new(),
            finish_reason: None,
            usage: None,
            finished: false,
        }
    }

    /// One `data:` payload: a chunk, an error object, or `[DONE]`.
    pub fn data(&mut self, data: &str) -> Result<Vec<StreamEvent>, BadEvent> {
        if self.finished {
            return Ok(Vec::new());
        }
        if data.trim() == "[DONE]" {
            return Ok(self.finish());
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|err| BadEvent(format!("not JSON: {err}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Ok(vec![stream_error(error)]);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(usage));
        }
        let mut events = Vec::new();
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue; // only one choice is asked for
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_string());
            }
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            // `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (Ollama, OpenRouter).
            let reasoning = ["reasoning_content", "reasoning"]
                .iter()
                .find_map(|field| delta.get(*field).and_then(Value::as_str));
            if let Some(piece) = reasoning.filter(|p| !p.is_empty()) {
                self.reasoning.push_str(piece);
                events.push(StreamEvent::ReasoningDelta(piece.to_string()));
            }
            if let Some(piece) = delta.get("content").and_then(Value::as_str) {
                if !piece.is_empty() {
                    self.text.push_str(piece);
                    events.push(StreamEvent::TextDelta(piece.to_string()));
                }
            }
            let calls = delta.get("tool_calls").and_then(Value::as_array);
            for (position, call) in calls.into_iter().flatten().enumerate() {
                if let Err(message) = self.call_delta(position, call) {
                    return Ok(vec![protocol_error(message)]);
                }
            }
        }
        Ok(events)
    }

    fn call_delta(&mut self, position: usize, call: &Value) -> Result<(), String> {
        let index = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let partial = self.calls.entry(index).or_default();
        if let Some(id) = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| !i.is_empty())
        {
            match &partial.id {
                Some(known) if known != id => {
                    return Err(format!(
                        "tool call index {index} was given two ids (`{known}`, then `{id}`)"
                    ))
                }
                _ => partial.id = Some(id.to_string()),
            }
        }
        let function = call.get("function");
        if let Some(name) = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            // Sent once by most servers; some repeat it whole, a few stream it in pieces.
            if partial.name != name {
                partial.name.push_str(name);
            }
        }
        if let Some(piece) = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
        {
            partial.arguments.push_str(piece);
        }
        Ok(())
    }

    /// The body ended without `[DONE]`: a server that sent its finish reason is done (some
    /// omit the terminator); otherwise the stream was cut.
    pub fn closed(&mut self) -> Vec<StreamEvent> {
        if self.finished || self.finish_reason.is_none() {
            return Vec::new();
        }
        self.finish()
    }

    /// `[DONE]`: check what was assembled and hand it over as items, then completion.
    fn finish(&mut self) -> Vec<StreamEvent> {
        self.finished = true;
        match self.finish_reason.as_deref() {
            Some("length") => {
                return vec![StreamEvent::Failed {
                    error: ModelError::ResponseFailed {
                        message: "response incomplete: the model reached its output token \
                                  limit (finish_reason: length); nothing of it was kept"
                            .into(),
                    },
                    retryable: false,
                }]
            }
            Some("content_filter") => {
                return vec![StreamEvent::Failed {
                    error: ModelError::ResponseFailed {
                        message: "response incomplete: the provider's content filter stopped it \
                                  (finish_reason: content_filter)"
                            .into(),
                    },
                    retryable: false,
                }]
            }
            _ => {}
        }
        let mut items = Vec::new();
        if !self.reasoning.is_empty() {
            items.push(ResponseItem::Reasoning {
                id: format!(
                    "{CHAT_REASONING_ID_PREFIX}{}",
                    uuid::Uuid::now_v7().simple()
                ),
                summary: vec![ReasoningSummary::SummaryText {
                    text: std::mem::take(&mut self.reasoning),
                }],
                encrypted_content: None,
            });
        }
        if !self.text.is_empty() {
            items.push(ResponseItem::Message {
                id: None,
                role: Role::Assistant,
                content: vec![ContentItem::OutputText {
                    text: std::mem::take(&mut self.text),
                }],
            });
        }
        for (expected, (index, call)) in std::mem::take(&mut self.calls).into_iter().enumerate() {
            if index != expected as u64 {
                return vec![protocol_error(format!(
                    "tool call deltas skipped index {expected} (next index was {index}); the \
                     response is incomplete"
                ))];
            }
            if call.name.is_empty() {
                return vec![protocol_error(format!(
                    "tool call index {index} never received a function name"
                ))];
            }
            // A few local servers send no id; one is needed to pair the output with the call.
            let call_id = call
                .id
                .unwrap_or_else(|| format!("call_{}", uuid::Uuid::now_v7().simple()));
            match assembled_call(call_id, call.name, call.arguments, &self.custom_tools) {
                Ok(item) => items.push(item),
                Err(message) => return vec![protocol_error(message)],
            }
        }
        let mut events: Vec<StreamEvent> = items.into_iter().map(StreamEvent::ItemDone).collect();
        events.push(StreamEvent::Completed(self.usage.unwrap_or_default()));
        events
    }
}

/// An `error` object inside the stream.
fn stream_error(error: &Value) -> StreamEvent {
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .or_else(|| error.get("type").and_then(Value::as_str))
        .unwrap_or("");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| error.to_string());
    let (error, retryable) = classify_code(code, message);
    StreamEvent::Failed { error, retryable }
}

/// Chat usage (`prompt_tokens`, `completion_tokens`, details) as ours.
pub fn parse_usage(usage: &Value) -> TokenUsage {
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let input = number("/prompt_tokens");
    let output = number("/completion_tokens");
    TokenUsage {
        input_tokens: input,
        cached_input_tokens: number("/prompt_tokens_details/cached_tokens"),
        output_tokens: output,
        reasoning_output_tokens: number("/completion_tokens_details/reasoning_tokens"),
        total_tokens: usage
            .get("total_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(input + output),
        // Chat Completions reports no cache writes.
        cache_write_input_tokens: 0,
    }
}
