//! The OpenAI Chat Completions wire (`wire_api = "chat"`), spoken by local servers (Ollama,
//! llama.cpp, vLLM, LM Studio) and many vendors.
//!
//! The history is kept as Responses items and mapped on every request: assistant text and the
//! tool calls that follow it become one assistant message with `tool_calls`, outputs become
//! `tool` messages, freeform tools (apply_patch) become functions with one `input` string.
//! Reasoning is not sent back (most servers refuse `reasoning_content` in input); the history
//! keeps it, so a thread can move to another wire and back without losing anything.

mod stream;

use super::history::{freeform_arguments, freeform_parameters, message_text};
use super::sse::{BadEvent, StreamEvent};
use super::wire::{Wire, WireDecoder};
use serde_json::{json, Value};
use troupe_messages::items::{ContentItem, FunctionOutput, ResponseItem, Role};
use troupe_messages::sampling::ModelRequest;
use troupe_messages::tools::ToolSpec;

pub use stream::ChatDecoder;

pub struct ChatWire;

impl Wire for ChatWire {
    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn WireDecoder> {
        Box::new(ChatDecoder::new(&request.tools))
    }
}

impl WireDecoder for ChatDecoder {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, BadEvent> {
        self.data(data)
    }

    fn end(&mut self) -> Vec<StreamEvent> {
        self.closed()
    }
}

/// The JSON body of a streaming Chat Completions request.
pub fn request_body(request: &ModelRequest) -> Value {
    let mut body = json!({
        "model": request.model,
        "messages": messages(&request.instructions, &request.input),
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().filter_map(tool).collect();
        body["tool_choice"] = json!("auto");
        body["parallel_tool_calls"] = json!(request.parallel_tool_calls);
    }
    if let Some(effort) = &request.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    // Chat Completions' form of a structured answer; verbosity has no Chat equivalent.
    if let Some(schema) = &request.output_schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": { "name": "codex_output_schema", "strict": true, "schema": schema },
        });
    }
    body
}

/// A tool as this wire declares it. `web_search` runs at the provider and only the Responses
/// wire has it: settings naming it for a provider of this wire are refused at load
/// (`web_search` in config), so none reaches here.
fn tool(spec: &ToolSpec) -> Option<Value> {
    let declared = match spec {
        ToolSpec::Function {
            name,
            description,
            strict,
            parameters,
        } => {
            let mut function = json!({
                "name": name,
                "description": description,
                "parameters": parameters,
            });
            // Only sent when set: several local servers refuse the field.
            if *strict {
                function["strict"] = json!(true);
            }
            json!({ "type": "function", "function": function })
        }
        ToolSpec::Custom {
            name, description, ..
        } => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": freeform_parameters(),
            },
        }),
        ToolSpec::WebSearch { .. } => return None,
    };
    Some(declared)
}

/// A message's content: plain text, or text and `image_url` parts when it holds images.
fn chat_content(content: &[ContentItem]) -> Value {
    if !content
        .iter()
        .any(|c| matches!(c, ContentItem::InputImage { .. }))
    {
        return json!(message_text(content));
    }
    let parts: Vec<Value> = content
        .iter()
        .map(|part| match part {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                json!({ "type": "text", "text": text })
            }
            ContentItem::InputImage { image_url, .. } => {
                json!({ "type": "image_url", "image_url": { "url": image_url } })
            }
        })
        .collect();
    Value::Array(parts)
}

/// The history as Chat messages, the instructions first as the system message.
pub fn messages(instructions: &str, input: &[ResponseItem]) -> Vec<Value> {
    let mut out = vec![json!({ "role": "system", "content": instructions })];
    let mut tool_images: Vec<String> = Vec::new();
    for item in input {
        if !matches!(
            item,
            ResponseItem::FunctionCallOutput { .. } | ResponseItem::CustomToolCallOutput { .. }
        ) {
            flush_tool_images(&mut out, &mut tool_images);
        }
        match item {
            ResponseItem::Message { role, content, .. } => {
                let role = match role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    // Most local chat templates know no `developer` role.
                    Role::Developer | Role::System => "system",
                };
                out.push(json!({ "role": role, "content": chat_content(content) }));
            }
            // Only a Responses provider searches (config refuses web_search elsewhere); a
            // thread moved to this wire keeps the search's outcome in the answers.
            ResponseItem::Reasoning { .. } | ResponseItem::WebSearchCall { .. } => {}
            ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            } => push_tool_call(&mut out, call_id, name, arguments),
            ResponseItem::CustomToolCall {
                call_id,
                name,
                input,
                ..
            } => push_tool_call(&mut out, call_id, name, &freeform_arguments(input)),
            ResponseItem::FunctionCallOutput { call_id, output } => {
                // A tool message holds text only: an image a tool attached follows the
                // batch's tool messages as a user message (`flush_tool_images`).
                let images = output.images();
                let text = match output {
                    FunctionOutput::Text(text) => text.clone(),
                    FunctionOutput::Content(_) if images.is_empty() => output.text(),
                    FunctionOutput::Content(_) => {
                        format!("{} image(s) attached in the next message", images.len())
                    }
                };
                tool_images.extend(images.into_iter().map(str::to_string));
                out.push(json!({ "role": "tool", "tool_call_id": call_id, "content": text }));
            }
            ResponseItem::CustomToolCallOutput { call_id, output } => out.push(json!({
                "role": "tool",
                "tool_call_id": call_id,
                "content": output,
            })),
        }
    }
    flush_tool_images(&mut out, &mut tool_images);
    out
}

/// Images tool outputs attached, as one user message after the tool messages (a message of
/// another role between a call batch's tool messages would be refused).
fn flush_tool_images(out: &mut Vec<Value>, images: &mut Vec<String>) {
    if images.is_empty() {
        return;
    }
    let parts: Vec<Value> = images
        .drain(..)
        .map(|url| json!({ "type": "image_url", "image_url": { "url": url } }))
        .collect();
    out.push(json!({ "role": "user", "content": parts }));
}

/// Parallel calls travel in one assistant message: a call joins the assistant message just
/// before it (its text, or the calls before it), else opens one without text.
fn push_tool_call(out: &mut Vec<Value>, call_id: &str, name: &str, arguments: &str) {
    let call = json!({
        "id": call_id,
        "type": "function",
        "function": { "name": name, "arguments": arguments },
    });
    if let Some(last) = out.last_mut() {
        if last["role"] == "assistant" {
            match last.get_mut("tool_calls").and_then(Value::as_array_mut) {
                Some(calls) => calls.push(call),
                None => last["tool_calls"] = json!([call]),
            }
            return;
        }
    }
    out.push(json!({ "role": "assistant", "content": null, "tool_calls": [call] }));
}

#[cfg(test)]
#[path = "chat_tests.rs"]
mod chat_tests;
