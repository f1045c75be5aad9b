//! The Anthropic Messages wire (`wire_api = "anthropic"`).
//!
//! The history (Responses items) maps to alternating user/assistant messages of content
//! blocks: assistant text, `thinking` blocks (replayed with their signature, as the API
//! requires before a `tool_use`), `tool_use` for every call (freeform tools as
//! `{"input": …}`), and `tool_result` blocks in the user message after. The stable prefix
//! is marked for prompt caching: the system prompt, the tools, and the newest message (so
//! the next request of the turn reads everything before it from the cache).

mod stream;

use super::history::{
    freeform_parameters, message_text, ANTHROPIC_REASONING_ID_PREFIX, ANTHROPIC_SIGNATURE_PREFIX,
};
use super::sse::{BadEvent, StreamEvent};
use super::wire::{Wire, WireDecoder};
use serde_json::{json, Value};
use troupe_messages::items::{ContentItem, FunctionOutput, ReasoningSummary, ResponseItem, Role};
use troupe_messages::sampling::ModelRequest;
use troupe_messages::tools::ToolSpec;

pub use stream::AnthropicDecoder;

/// `anthropic-version` header value.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` of every request (the API requires one); thinking budgets stay below it.
pub const MAX_OUTPUT_TOKENS: u64 = 32_000;
/// Prefix of `encrypted_content` holding a redacted thinking block's data.
pub const REDACTED_THINKING_PREFIX: &str = "anthropic-redacted:";

pub struct AnthropicWire;

impl Wire for AnthropicWire {
    fn path(&self) -> &'static str {
        "/messages"
    }

    fn body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn authorize(&self, builder: reqwest::RequestBuilder, key: &str) -> reqwest::RequestBuilder {
        builder.header("x-api-key", key)
    }

    fn headers(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        builder.header("anthropic-version", API_VERSION)
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn WireDecoder> {
        Box::new(AnthropicDecoder::new(&request.tools))
    }
}

impl WireDecoder for AnthropicDecoder {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, BadEvent> {
        self.data(data)
    }
}

/// The JSON body of a streaming Messages request.
pub fn request_body(request: &ModelRequest) -> Value {
    let mut body = json!({
        "model": request.model,
        "max_tokens": MAX_OUTPUT_TOKENS,
        "system": [{
            "type": "text",
            "text": request.instructions,
            "cache_control": { "type": "ephemeral" },
        }],
        "messages": messages(&request.input),
        "stream": true,
    });
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request.tools.iter().filter_map(tool).collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = json!({ "type": "ephemeral" });
        }
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = json!({
            "type": "auto",
            "disable_parallel_tool_use": !request.parallel_tool_calls,
        });
    }
    if let Some(budget) = request
        .reasoning_effort
        .as_deref()
        .and_then(thinking_budget)
    {
        body["thinking"] = json!({ "type": "enabled", "budget_tokens": budget });
    }
    body
}

/// `model_reasoning_effort` as a thinking budget (none for `minimal`).
fn thinking_budget(effort: &str) -> Option<u64> {
    match effort {
        "low" => Some(4_000),
        "medium" => Some(10_000),
        "high" => Some(20_000),
        "xhigh" => Some(30_000),
        _ => None,
    }
}

/// A tool as this wire declares it. `web_search` runs at the provider and only the Responses
/// wire has it: settings naming it for a provider of this wire are refused at load
/// (`web_search` in config), so none reaches here.
fn tool(spec: &ToolSpec) -> Option<Value> {
    let declared = match spec {
        ToolSpec::Function {
            name,
            description,
            parameters,
            ..
        } => json!({ "name": name, "description": description, "input_schema": parameters }),
        ToolSpec::Custom {
            name, description, ..
        } => json!({
            "name": name,
            "description": description,
            "input_schema": freeform_parameters(),
        }),
        ToolSpec::WebSearch { .. } => return None,
    };
    Some(declared)
}

/// Appends `block` to the last message when it has `role`, else in a new message.
fn push_block(out: &mut Vec<Value>, role: &str, block: Value) {
    match out.last_mut() {
        Some(last) if last["role"] == role => {
            if let Some(content) = last["content"].as_array_mut() {
                content.push(block);
            }
        }
        _ => out.push(json!({ "role": role, "content": [block] })),
    }
}

/// `data:<media type>;base64,<data>` → (media type, data).
fn data_url_parts(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (media_type, data) = rest.split_once(";base64,")?;
    Some((media_type, data))
}

/// A function output as `tool_result` content: its text, or text and image blocks (the
/// Messages API takes images inside a tool result as base64 sources).
fn tool_result_content(output: &FunctionOutput) -> Value {
    let FunctionOutput::Content(parts) = output else {
        return json!(output.text());
    };
    let blocks: Vec<Value> = parts
        .iter()
        .filter_map(|part| match part {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                Some(json!({ "type": "text", "text": text }))
            }
            ContentItem::InputImage { image_url, .. } => {
                data_url_parts(image_url).map(|(media_type, data)| {
                    json!({
                        "type": "image",
                        "source": { "type": "base64", "media_type": media_type, "data": data },
                    })
                })
            }
        })
        .collect();
    json!(blocks)
}

/// The history as Messages: consecutive blocks of one role share a message.
pub fn messages(input: &[ResponseItem]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for item in input {
        let (role, block) = match item {
            ResponseItem::Message { role, content, .. } => {
                // Images go first as their own blocks (the Messages API takes base64 data).
                for part in content {
                    if let ContentItem::InputImage { image_url, .. } = part {
                        if let Some((media_type, data)) = data_url_parts(image_url) {
                            let source =
                                json!({ "type": "base64", "media_type": media_type, "data": data });
                            push_block(
                                &mut out,
                                "user",
                                json!({ "type": "image", "source": source }),
                            );
                        }
                    }
                }
                let text = message_text(content);
                if text.is_empty() {
                    continue; // the API refuses empty text blocks
                }
                let role = match role {
                    Role::Assistant => "assistant",
                    // The API has one system prompt; runtime messages go in as user text.
                    Role::User | Role::Developer | Role::System => "user",
                };
                (role, json!({ "type": "text", "text": text }))
            }
            ResponseItem::Reasoning {
                id,
                summary,
                encrypted_content,
            } => match thinking_block(id, summary, encrypted_content.as_deref()) {
                Some(block) => ("assistant", block),
                None => continue,
            },
            // Another wire's search (a thread moved here): its outcome is in the answers.
            ResponseItem::WebSearchCall { .. } => continue,
            ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                let input = match serde_json::from_str::<Value>(arguments) {
                    Ok(value) if value.is_object() => value,
                    // The call's output already told the model its arguments were bad.
                    _ => json!({ "arguments": arguments }),
                };
                (
                    "assistant",
                    json!({ "type": "tool_use", "id": call_id, "name": name, "input": input }),
                )
            }
            ResponseItem::CustomToolCall {
                call_id,
                name,
                input,
                ..
            } => (
                "assistant",
                json!({
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": { "input": input },
                }),
            ),
            ResponseItem::FunctionCallOutput { call_id, output } => (
                "user",
                json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": tool_result_content(output),
                }),
            ),
            ResponseItem::CustomToolCallOutput { call_id, output } => (
                "user",
                json!({ "type": "tool_result", "tool_use_id": call_id, "content": output }),
            ),
        };
        push_block(&mut out, role, block);
    }
    if let Some(block) = out
        .last_mut()
        .and_then(|last| last["content"].as_array_mut())
        .and_then(|content| content.last_mut())
    {
        block["cache_control"] = json!({ "type": "ephemeral" });
    }
    out
}

/// A thinking block to replay, for reasoning this wire wrote (others cannot be verified by
/// the API and are left out).
fn thinking_block(
    id: &str,
    summary: &[ReasoningSummary],
    encrypted_content: Option<&str>,
) -> Option<Value> {
    if !id.starts_with(ANTHROPIC_REASONING_ID_PREFIX) {
        return None;
    }
    let content = encrypted_content?;
    if let Some(data) = content.strip_prefix(REDACTED_THINKING_PREFIX) {
        return Some(json!({ "type": "redacted_thinking", "data": data }));
    }
    let signature = content.strip_prefix(ANTHROPIC_SIGNATURE_PREFIX)?;
    let thinking: String = summary
        .iter()
        .map(|part| match part {
            ReasoningSummary::SummaryText { text } => text.as_str(),
        })
        .collect();
    Some(json!({ "type": "thinking", "thinking": thinking, "signature": signature }))
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod anthropic_tests;
