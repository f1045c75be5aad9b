//! The other wires of the mock: a script written as Responses API events is rendered as the
//! Chat Completions or Anthropic Messages stream that says the same thing (the same text and
//! reasoning deltas, the same tool calls, the same usage, the same failures), so one script
//! and its faults (drops, stalls, chunking) drive every wire. Each source event becomes zero
//! or more frames, so a stream cut after `k` events is cut at the same point on every wire.

use serde_json::{json, Value};

/// The wire a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `POST …/responses` (SSE) or the WebSocket endpoint.
    Responses,
    /// `POST …/chat/completions`.
    Chat,
    /// `POST …/messages`.
    Anthropic,
}

/// Renders `events` (a prefix of them when the stream is cut) as frames of `wire`, one list
/// per source event. `all` is the whole script (Anthropic announces usage up front).
pub fn frames(wire: Wire, events: &[Value], all: &[Value]) -> Vec<Vec<String>> {
    match wire {
        Wire::Responses => events
            .iter()
            .map(|e| vec![crate::response::encode_event(e)])
            .collect(),
        Wire::Chat => {
            let mut chat = ChatFrames::default();
            events.iter().map(|e| chat.event(e)).collect()
        }
        Wire::Anthropic => {
            let mut anthropic = AnthropicFrames::new(all);
            events.iter().map(|e| anthropic.event(e)).collect()
        }
    }
}

fn kind(event: &Value) -> &str {
    event.get("type").and_then(Value::as_str).unwrap_or("")
}

fn text_of(event: &Value, field: &str) -> String {
    event
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// Splits `text` in (up to) three pieces, so arguments arrive split across chunks.
fn pieces(text: &str) -> Vec<String> {
    let parts = crate::response::split_text(text, 3);
    if parts.is_empty() {
        vec![String::new()]
    } else {
        parts
    }
}

/// The arguments a call travels with on JSON-only wires (freeform input wrapped).
fn call_parts(item: &Value) -> Option<(String, String, String)> {
    let call_id = item.get("call_id")?.as_str()?.to_owned();
    let name = item.get("name")?.as_str()?.to_owned();
    let arguments = match item.get("type").and_then(Value::as_str)? {
        "function_call" => item.get("arguments")?.as_str()?.to_owned(),
        "custom_tool_call" => json!({ "input": item.get("input")?.as_str()? }).to_string(),
        _ => return None,
    };
    Some((call_id, name, arguments))
}

fn usage_of(event: &Value) -> (u64, u64, u64, u64) {
    let n = |p: &str| event.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    (
        n("/response/usage/input_tokens"),
        n("/response/usage/input_tokens_details/cached_tokens"),
        n("/response/usage/output_tokens"),
        n("/response/usage/output_tokens_details/reasoning_tokens"),
    )
}

fn error_of(event: &Value) -> (String, String) {
    let error = event
        .pointer("/response/error")
        .or_else(|| event.get("error"))
        .unwrap_or(event);
    (text_of(error, "code"), text_of(error, "message"))
}

/// Chat Completions chunks.
#[derive(Default)]
struct ChatFrames {
    next_call: u64,
    streamed_text: bool,
    streamed_reasoning: bool,
}

fn chat_chunk(delta: Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "model": "mock-model",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    format!("data: {chunk}\n\n")
}

impl ChatFrames {
    fn event(&mut self, event: &Value) -> Vec<String> {
        match kind(event) {
            "response.created" => vec![chat_chunk(json!({ "role": "assistant" }), None)],
            "response.output_text.delta" => {
                self.streamed_text = true;
                vec![chat_chunk(
                    json!({ "content": text_of(event, "delta") }),
                    None,
                )]
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.streamed_reasoning = true;
                vec![chat_chunk(
                    json!({ "reasoning_content": text_of(event, "delta") }),
                    None,
                )]
            }
            "response.output_item.done" => {
                self.item_done(event.get("item").unwrap_or(&Value::Null))
            }
            "response.completed" => {
                let (input, cached, output, reasoning) = usage_of(event);
                let finish = if self.next_call > 0 {
                    "tool_calls"
                } else {
                    "stop"
                };
                let usage = json!({
                    "id": "chatcmpl-mock",
                    "object": "chat.completion.chunk",
                    "choices": [],
                    "usage": {
                        "prompt_tokens": input,
                        "completion_tokens": output,
                        "total_tokens": input + output,
                        "prompt_tokens_details": { "cached_tokens": cached },
                        "completion_tokens_details": { "reasoning_tokens": reasoning },
                    },
                });
                vec![
                    chat_chunk(json!({}), Some(finish)),
                    format!("data: {usage}\n\n"),
                    "data: [DONE]\n\n".to_owned(),
                ]
            }
            "response.incomplete" => vec![
                chat_chunk(json!({}), Some("length")),
                "data: [DONE]\n\n".to_owned(),
            ],
            "response.failed" | "error" => {
                let (code, message) = error_of(event);
                let error = json!({ "error": { "code": code, "message": message } });
                vec![format!("data: {error}\n\n")]
            }
            "keepalive" => vec![": keepalive\n\n".to_owned()],
            _ => Vec::new(),
        }
    }

    fn item_done(&mut self, item: &Value) -> Vec<String> {
        match item.get("type").and_then(Value::as_str) {
            Some("message") if !self.streamed_text => {
                let text = item
                    .pointer("/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                vec![chat_chunk(json!({ "content": text }), None)]
            }
            Some("reasoning") if !self.streamed_reasoning => {
                let text = item
                    .pointer("/summary/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                vec![chat_chunk(json!({ "reasoning_content": text }), None)]
            }
            _ => {
                let Some((call_id, name, arguments)) = call_parts(item) else {
                    return Vec::new();
                };
                let index = self.next_call;
                self.next_call += 1;
                let mut out = vec![chat_chunk(
                    json!({ "tool_calls": [{
                        "index": index, "id": call_id, "type": "function",
                        "function": { "name": name, "arguments": "" },
                    }]}),
                    None,
                )];
                for piece in pieces(&arguments) {
                    out.push(chat_chunk(
                        json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }),
                        None,
                    ));
                }
                out
            }
        }
    }
}

/// Anthropic Messages events.
struct AnthropicFrames {
    input_tokens: u64,
    cached_tokens: u64,
    next_block: u64,
    /// The open text or thinking block, if any: (index, is_thinking).
    open: Option<(u64, bool)>,
    calls: u64,
}

fn anthropic_event(event: Value) -> String {
    crate::response::encode_event(&event)
}

impl AnthropicFrames {
    fn new(all: &[Value]) -> Self {
        let (input, cached, _, _) = all
            .iter()
            .find(|e| kind(e) == "response.completed")
            .map(usage_of)
            .unwrap_or_default();
        AnthropicFrames {
            input_tokens: input,
            cached_tokens: cached,
            next_block: 0,
            open: None,
            calls: 0,
        }
    }

    fn event(&mut self, event: &Value) -> Vec<String> {
        match kind(event) {
            "response.created" => vec![anthropic_event(json!({
                "type": "message_start",
                "message": {
                    "id": "msg_mock", "type": "message", "role": "assistant", "content": [],
                    "model": "mock-model", "stop_reason": null,
                    "usage": {
                        "input_tokens": self.input_tokens - self.cached_tokens,
                        "cache_read_input_tokens": self.cached_tokens,
                        "cache_creation_input_tokens": 0,
                        "output_tokens": 1,
                    },
                },
            }))],
            "response.output_text.delta" => {
                let mut out = self.open_block(false);
                out.push(
                    self.delta(json!({ "type": "text_delta", "text": text_of(event, "delta") })),
                );
                out
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let mut out = self.open_block(true);
                out.push(self.delta(
                    json!({ "type": "thinking_delta", "thinking": text_of(event, "delta") }),
                ));
                out
            }
            "response.output_item.done" => {
                self.item_done(event.get("item").unwrap_or(&Value::Null))
            }
            "response.completed" => {
                let (_, _, output, _) = usage_of(event);
                let stop = if self.calls > 0 {
                    "tool_use"
                } else {
                    "end_turn"
                };
                let mut out = self.close_block();
                out.push(anthropic_event(json!({
                    "type": "message_delta",
                    "delta": { "stop_reason": stop, "stop_sequence": null },
                    "usage": { "output_tokens": output },
                })));
                out.push(anthropic_event(json!({ "type": "message_stop" })));
                out
            }
            "response.incomplete" => vec![
                anthropic_event(json!({
                    "type": "message_delta",
                    "delta": { "stop_reason": "max_tokens" },
                    "usage": { "output_tokens": 1 },
                })),
                anthropic_event(json!({ "type": "message_stop" })),
            ],
            "response.failed" | "error" => {
                let (code, message) = error_of(event);
                let (kind, message) = match code.as_str() {
                    "context_length_exceeded" => (
                        "invalid_request_error",
                        format!("prompt is too long: {message}"),
                    ),
                    "overloaded_error" => ("overloaded_error", message),
                    _ => ("api_error", format!("{code}: {message}")),
                };
                vec![anthropic_event(json!({
                    "type": "error",
                    "error": { "type": kind, "message": message },
                }))]
            }
            "keepalive" => vec![anthropic_event(json!({ "type": "ping" }))],
            _ => Vec::new(),
        }
    }

    fn open_block(&mut self, thinking: bool) -> Vec<String> {
        if self.open.map(|(_, t)| t) == Some(thinking) {
            return Vec::new();
        }
        let mut out = self.close_block();
        let index = self.next_block;
        self.next_block += 1;
        self.open = Some((index, thinking));
        let block = if thinking {
            json!({ "type": "thinking", "thinking": "" })
        } else {
            json!({ "type": "text", "text": "" })
        };
        out.push(anthropic_event(json!({
            "type": "content_block_start", "index": index, "content_block": block,
        })));
        out
    }

    fn delta(&self, delta: Value) -> String {
        let index = self.open.map_or(0, |(i, _)| i);
        anthropic_event(json!({ "type": "content_block_delta", "index": index, "delta": delta }))
    }

    fn close_block(&mut self) -> Vec<String> {
        let Some((index, thinking)) = self.open.take() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if thinking {
            out.push(anthropic_event(json!({
                "type": "content_block_delta", "index": index,
                "delta": { "type": "signature_delta", "signature": format!("mocksig{index}") },
            })));
        }
        out.push(anthropic_event(
            json!({ "type": "content_block_stop", "index": index }),
        ));
        out
    }

    fn item_done(&mut self, item: &Value) -> Vec<String> {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                if self.open == Some((self.next_block.wrapping_sub(1), false)) {
                    return self.close_block();
                }
                let text = item
                    .pointer("/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let mut out = self.open_block(false);
                out.push(self.delta(json!({ "type": "text_delta", "text": text })));
                out.extend(self.close_block());
                out
            }
            Some("reasoning") => {
                if self.open == Some((self.next_block.wrapping_sub(1), true)) {
                    return self.close_block();
                }
                let text = item
                    .pointer("/summary/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let mut out = self.open_block(true);
                out.push(self.delta(json!({ "type": "thinking_delta", "thinking": text })));
                out.extend(self.close_block());
                out
            }
            _ => {
                let Some((call_id, name, arguments)) = call_parts(item) else {
                    return Vec::new();
                };
                let mut out = self.close_block();
                let index = self.next_block;
                self.next_block += 1;
                self.calls += 1;
                out.push(anthropic_event(json!({
                    "type": "content_block_start", "index": index,
                    "content_block": { "type": "tool_use", "id": call_id, "name": name, "input": {} },
                })));
                for piece in pieces(&arguments) {
                    out.push(anthropic_event(json!({
                        "type": "content_block_delta", "index": index,
                        "delta": { "type": "input_json_delta", "partial_json": piece },
                    })));
                }
                out.push(anthropic_event(
                    json!({ "type": "content_block_stop", "index": index }),
                ));
                out
            }
        }
    }
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
