//! The OpenAI Responses API wire: the history goes as it is (it is kept in this shape).

use super::sse::{decode_event, BadEvent, StreamEvent};
use super::wire::{Wire, WireDecoder};
use serde_json::{json, Value};
use troupe_messages::items::ResponseItem;
use troupe_messages::sampling::ModelRequest;

pub struct ResponsesWire;

impl Wire for ResponsesWire {
    fn path(&self) -> &'static str {
        "/responses"
    }

    fn body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn decoder(&self, _request: &ModelRequest) -> Box<dyn WireDecoder> {
        Box::new(ResponsesDecoder)
    }
}

/// The JSON body of a Responses API request. Reasoning written by another wire (Chat's
/// `reasoning_content`, Anthropic's signed thinking) cannot be sent back to this API, so it
/// is left out; the history keeps it.
pub fn request_body(request: &ModelRequest) -> Value {
    let input: Vec<&ResponseItem> = request
        .input
        .iter()
        .filter(|item| !super::history::foreign_reasoning(item))
        .collect();
    let mut body = json!({
        "model": request.model,
        "instructions": request.instructions,
        "input": input,
        "tools": request.tools,
        "tool_choice": "auto",
        "parallel_tool_calls": request.parallel_tool_calls,
        "store": false,
        "stream": true,
        "prompt_cache_key": request.prompt_cache_key,
    });
    if let Some(effort) = &request.reasoning_effort {
        body["reasoning"] = json!({ "effort": effort });
    }
    if let Some(text) = text_controls(request) {
        body["text"] = text;
    }
    body
}

/// The request's `text` field as Codex sends it: `verbosity` and/or a strict JSON Schema
/// `format` named `codex_output_schema`; none when neither is set.
pub fn text_controls(request: &ModelRequest) -> Option<Value> {
    if request.verbosity.is_none() && request.output_schema.is_none() {
        return None;
    }
    let mut text = json!({});
    if let Some(verbosity) = &request.verbosity {
        text["verbosity"] = json!(verbosity);
    }
    if let Some(schema) = &request.output_schema {
        text["format"] = json!({
            "type": "json_schema",
            "strict": true,
            "schema": schema,
            "name": "codex_output_schema",
        });
    }
    Some(text)
}

struct ResponsesDecoder;

impl WireDecoder for ResponsesDecoder {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, BadEvent> {
        decode_event(data).map(|event| vec![event])
    }
}
