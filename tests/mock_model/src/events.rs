//! Constructors for OpenAI Responses API streaming events.
//!
//! Scripts are written in terms of these helpers so that every test speaks the
//! exact wire shapes a real `POST /v1/responses` stream produces, and a change
//! to a shape is made in one place.

use serde_json::{json, Value};

/// `response.created` announcing the response id.
pub fn created(resp_id: &str) -> Value {
    json!({"type": "response.created", "response": {"id": resp_id}})
}

/// `response.output_text.delta`: a piece of assistant text.
pub fn output_text_delta(item_id: &str, delta: &str) -> Value {
    json!({
        "type": "response.output_text.delta",
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
    })
}

/// `response.reasoning_summary_text.delta`: a piece of the reasoning summary.
pub fn reasoning_summary_delta(item_id: &str, delta: &str) -> Value {
    json!({
        "type": "response.reasoning_summary_text.delta",
        "item_id": item_id,
        "output_index": 0,
        "summary_index": 0,
        "delta": delta,
    })
}

/// `response.output_item.added` opening an (empty) assistant message.
pub fn message_item_added(item_id: &str) -> Value {
    json!({
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"type": "message", "role": "assistant", "id": item_id, "content": []},
    })
}

/// `response.output_item.done` carrying a finished assistant message.
pub fn assistant_message_done(item_id: &str, text: &str) -> Value {
    item_done(json!({
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }))
}

/// `response.output_item.done` carrying a finished reasoning item.
pub fn reasoning_done(item_id: &str, summary_text: &str) -> Value {
    item_done(json!({
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": summary_text}],
    }))
}

/// `response.output_item.done` carrying a finished function call.
///
/// `arguments` is the JSON-encoded argument object, as the API sends it.
pub fn function_call_done(call_id: &str, name: &str, arguments: &str) -> Value {
    item_done(json!({
        "type": "function_call",
        "id": format!("fc_{call_id}"),
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }))
}

/// `response.function_call_arguments.delta`: a piece of a call's arguments.
pub fn function_call_args_delta(item_id: &str, delta: &str) -> Value {
    json!({
        "type": "response.function_call_arguments.delta",
        "item_id": item_id,
        "output_index": 0,
        "delta": delta,
    })
}

/// `response.output_item.done` carrying a finished custom (freeform) tool call.
pub fn custom_tool_call_done(call_id: &str, name: &str, input: &str) -> Value {
    item_done(json!({
        "type": "custom_tool_call",
        "id": format!("ctc_{call_id}"),
        "call_id": call_id,
        "name": name,
        "input": input,
    }))
}

/// `response.completed` with token usage; `total_tokens` = input + output.
pub fn completed(
    resp_id: &str,
    input_tokens: u64,
    cached_tokens: u64,
    output_tokens: u64,
    reasoning_tokens: u64,
) -> Value {
    json!({
        "type": "response.completed",
        "response": {
            "id": resp_id,
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": cached_tokens},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": input_tokens + output_tokens,
            },
        },
    })
}

/// `response.failed` with an error code and message.
pub fn failed(resp_id: &str, code: &str, message: &str) -> Value {
    json!({
        "type": "response.failed",
        "response": {"id": resp_id, "error": {"code": code, "message": message}},
    })
}

/// Returns `event` with its top-level `output_index` replaced by `index`
/// (for responses carrying several output items).
pub fn with_output_index(mut event: Value, index: usize) -> Value {
    if let Some(obj) = event.as_object_mut() {
        obj.insert("output_index".to_owned(), json!(index));
    }
    event
}

fn item_done(item: Value) -> Value {
    json!({"type": "response.output_item.done", "output_index": 0, "item": item})
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
