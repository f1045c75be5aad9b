//! Anthropic Messages stream → response items. Content blocks are assembled by `index`
//! (`content_block_start`, `…_delta`, `…_stop`) and handed over at `message_stop`; an
//! `error` event (`overloaded_error`, …) mid-stream fails the attempt (retried when a retry
//! may help), so nothing half-received is kept.

use super::REDACTED_THINKING_PREFIX;
use crate::sampler::history::{
    assembled_call, custom_tool_names, ANTHROPIC_REASONING_ID_PREFIX, ANTHROPIC_SIGNATURE_PREFIX,
};
use crate::sampler::sse::{classify_code, BadEvent, StreamEvent};
use crate::sampler::wire::protocol_error;
use serde_json::Value;
use std::collections::BTreeMap;
use troupe_messages::errors::ModelError;
use troupe_messages::items::{ContentItem, ReasoningSummary, ResponseItem, Role};
use troupe_messages::tools::ToolSpec;
use troupe_messages::usage::TokenUsage;

#[derive(Debug)]
enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
}

/// State of one attempt's Messages stream.
#[derive(Debug)]
pub struct AnthropicDecoder {
    custom_tools: Vec<String>,
    blocks: BTreeMap<u64, Block>,
    stop_reason: Option<String>,
    usage: TokenUsage,
    finished: bool,
}

impl AnthropicDecoder {
    pub fn new(tools: &[ToolSpec]) -> Self {
        AnthropicDecoder {
            custom_tools: custom_tool_names(tools),
            blocks: BTreeMap::new(),
            stop_reason: None,
            usage: TokenUsage::default(),
            finished: false,
        }
    }

    /// One event's `data` (its `type` repeats the `event:` name).
    pub fn data(&mut self, data: &str) -> Result<Vec<StreamEvent>, BadEvent> {
        if self.finished {
            return Ok(Vec::new());
        }
        let event: Value =
            serde_json::from_str(data).map_err(|err| BadEvent(format!("not JSON: {err}")))?;
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| BadEvent("event without a `type`".into()))?;
        let index = event.get("index").and_then(Value::as_u64);
        Ok(match kind {
            "message_start" => {
                if let Some(usage) = event.pointer("/message/usage") {
                    self.read_usage(usage);
                }
                Vec::new()
            }
            "content_block_start" => {
                let (Some(index), Some(block)) = (index, event.get("content_block")) else {
                    return Err(BadEvent(
                        "content_block_start without index or block".into(),
                    ));
                };
                let text = |field: &str| {
                    block
                        .get(field)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                let block = match block.get("type").and_then(Value::as_str) {
                    Some("text") => Block::Text(text("text")),
                    Some("thinking") => Block::Thinking {
                        text: text("thinking"),
                        signature: text("signature"),
                    },
                    Some("redacted_thinking") => Block::Redacted(text("data")),
                    Some("tool_use") => Block::ToolUse {
                        id: text("id"),
                        name: text("name"),
                        json: String::new(),
                    },
                    other => {
                        return Err(BadEvent(format!("unsupported content block {other:?}")));
                    }
                };
                if self.blocks.insert(index, block).is_some() {
                    return Ok(vec![protocol_error(format!(
                        "content block {index} was started twice"
                    ))]);
                }
                Vec::new()
            }
            "content_block_delta" => self.delta(index, event.get("delta")),
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = event.get("usage") {
                    self.read_usage(usage);
                }
                Vec::new()
            }
            "message_stop" => self.finish(),
            "error" => vec![stream_error(event.get("error").unwrap_or(&event))],
            // ping, content_block_stop, and anything newer
            _ => vec![StreamEvent::Ignored],
        })
    }

    fn delta(&mut self, index: Option<u64>, delta: Option<&Value>) -> Vec<StreamEvent> {
        let (Some(index), Some(delta)) = (index, delta) else {
            return vec![protocol_error(
                "content_block_delta without index or delta".into(),
            )];
        };
        let Some(block) = self.blocks.get_mut(&index) else {
            return vec![protocol_error(format!(
                "content_block_delta for block {index}, which was never started"
            ))];
        };
        let piece = |field: &str| delta.get(field).and_then(Value::as_str).unwrap_or("");
        match (delta.get("type").and_then(Value::as_str), block) {
            (Some("text_delta"), Block::Text(text)) => {
                text.push_str(piece("text"));
                vec![StreamEvent::TextDelta(piece("text").to_string())]
            }
            (Some("thinking_delta"), Block::Thinking { text, .. }) => {
                text.push_str(piece("thinking"));
                vec![StreamEvent::ReasoningDelta(piece("thinking").to_string())]
            }
            (Some("signature_delta"), Block::Thinking { signature, .. }) => {
                signature.push_str(piece("signature"));
                Vec::new()
            }
            (Some("input_json_delta"), Block::ToolUse { json, .. }) => {
                json.push_str(piece("partial_json"));
                Vec::new()
            }
            (kind, _) => vec![protocol_error(format!(
                "delta {kind:?} does not fit content block {index}"
            ))],
        }
    }

    fn read_usage(&mut self, usage: &Value) {
        let number = |field: &str| usage.get(field).and_then(Value::as_u64);
        // message_start carries the input side; message_delta the (cumulative) output.
        if let Some(input) = number("input_tokens") {
            let read = number("cache_read_input_tokens").unwrap_or(0);
            let written = number("cache_creation_input_tokens").unwrap_or(0);
            self.usage.input_tokens = input + read + written;
            self.usage.cached_input_tokens = read;
            self.usage.cache_write_input_tokens = written;
        }
        if let Some(output) = number("output_tokens") {
            self.usage.output_tokens = output;
        }
        self.usage.total_tokens = self.usage.input_tokens + self.usage.output_tokens;
    }

    fn finish(&mut self) -> Vec<StreamEvent> {
        self.finished = true;
        if self.stop_reason.as_deref() == Some("max_tokens") {
            return vec![StreamEvent::Failed {
                error: ModelError::ResponseFailed {
                    message: "response incomplete: the model reached max_tokens \
                              (stop_reason: max_tokens); nothing of it was kept"
                        .into(),
                },
                retryable: false,
            }];
        }
        let mut items = Vec::new();
        let mut text_parts: Vec<ContentItem> = Vec::new();
        let flush_text = |parts: &mut Vec<ContentItem>, items: &mut Vec<ResponseItem>| {
            if !parts.is_empty() {
                items.push(ResponseItem::Message {
                    id: None,
                    role: Role::Assistant,
                    content: std::mem::take(parts),
                });
            }
        };
        for (index, block) in std::mem::take(&mut self.blocks) {
            let reasoning_id = || {
                format!(
                    "{ANTHROPIC_REASONING_ID_PREFIX}{}",
                    uuid::Uuid::now_v7().simple()
                )
            };
            match block {
                Block::Text(text) => {
                    if !text.is_empty() {
                        text_parts.push(ContentItem::OutputText { text });
                    }
                }
                Block::Thinking { text, signature } => {
                    flush_text(&mut text_parts, &mut items);
                    items.push(ResponseItem::Reasoning {
                        id: reasoning_id(),
                        summary: vec![ReasoningSummary::SummaryText { text }],
                        encrypted_content: Some(format!("{ANTHROPIC_SIGNATURE_PREFIX}{signature}")),
                    });
                }
                Block::Redacted(data) => {
                    flush_text(&mut text_parts, &mut items);
                    items.push(ResponseItem::Reasoning {
                        id: reasoning_id(),
                        summary: Vec::new(),
                        encrypted_content: Some(format!("{REDACTED_THINKING_PREFIX}{data}")),
                    });
                }
                Block::ToolUse { id, name, json } => {
                    flush_text(&mut text_parts, &mut items);
                    if id.is_empty() || name.is_empty() {
                        return vec![protocol_error(format!(
                            "tool_use block {index} has no id or name"
                        ))];
                    }
                    match assembled_call(id, name, json, &self.custom_tools) {
                        Ok(item) => items.push(item),
                        Err(message) => return vec![protocol_error(message)],
                    }
                }
            }
        }
        flush_text(&mut text_parts, &mut items);
        let mut events: Vec<StreamEvent> = items.into_iter().map(StreamEvent::ItemDone).collect();
        events.push(StreamEvent::Completed(self.usage));
        events
    }
}

/// An `error` event: `overloaded_error` and `api_error` are worth retrying.
fn stream_error(error: &Value) -> StreamEvent {
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_string();
    if message.contains("prompt is too long") {
        return StreamEvent::Failed {
            error: ModelError::ContextWindowExceeded { message },
            retryable: false,
        };
    }
    let (error, retryable) = classify_code(kind, format!("{kind}: {message}"));
    StreamEvent::Failed { error, retryable }
}
