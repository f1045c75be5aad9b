//! Responses API stream events → what the sampler acts on. Pure; no I/O.

use serde_json::Value;
use troupe_messages::errors::ModelError;
use troupe_messages::items::ResponseItem;
use troupe_messages::usage::TokenUsage;

/// One decoded stream event.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// A finished output item.
    ItemDone(ResponseItem),
    /// The response finished; its usage.
    Completed(TokenUsage),
    /// The provider says the response failed; `retryable` tells whether trying again may help.
    Failed {
        error: ModelError,
        retryable: bool,
    },
    /// An event we do not act on (created, added, in_progress, …).
    Ignored,
}

/// Why an event could not be decoded (the stream goes on; the event is skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct BadEvent(pub String);

/// Decodes the JSON `data` of one SSE event.
pub fn decode_event(data: &str) -> Result<StreamEvent, BadEvent> {
    let value: Value =
        serde_json::from_str(data).map_err(|err| BadEvent(format!("not JSON: {err}")))?;
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| BadEvent("event without a `type`".into()))?;
    let text = |field: &str| {
        value
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| BadEvent(format!("`{kind}` without `{field}`")))
    };
    Ok(match kind {
        "response.output_text.delta" => StreamEvent::TextDelta(text("delta")?),
        "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
            StreamEvent::ReasoningDelta(text("delta")?)
        }
        "response.output_item.done" => {
            let item = value
                .get("item")
                .cloned()
                .ok_or_else(|| BadEvent("output_item.done without `item`".into()))?;
            match serde_json::from_value::<ResponseItem>(item) {
                Ok(item) => StreamEvent::ItemDone(item),
                // Item kinds we do not model (web search, images…) are skipped.
                Err(err) => return Err(BadEvent(format!("unsupported output item: {err}"))),
            }
        }
        "response.completed" => StreamEvent::Completed(parse_usage(
            value.get("response").and_then(|r| r.get("usage")),
        )),
        "response.failed" | "error" => failed(&value),
        "response.incomplete" => StreamEvent::Failed {
            error: ModelError::ResponseFailed {
                message: format!(
                    "response incomplete: {}",
                    value
                        .pointer("/response/incomplete_details/reason")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown reason")
                ),
            },
            retryable: false,
        },
        _ => StreamEvent::Ignored,
    })
}

fn failed(value: &Value) -> StreamEvent {
    let error = value
        .pointer("/response/error")
        .or_else(|| value.get("error"))
        .unwrap_or(value);
    let code = error.get("code").and_then(Value::as_str).unwrap_or("");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_string();
    let (error, retryable) = classify_code(code, message);
    StreamEvent::Failed { error, retryable }
}

/// Maps a provider error code to our error and whether a retry may help.
pub fn classify_code(code: &str, message: String) -> (ModelError, bool) {
    match code {
        "context_length_exceeded" => (ModelError::ContextWindowExceeded { message }, false),
        "insufficient_quota" => (ModelError::QuotaExceeded { message }, false),
        "invalid_prompt" | "invalid_request_error" => (
            ModelError::BadRequest {
                status: 400,
                message,
            },
            false,
        ),
        _ => (ModelError::ResponseFailed { message }, true),
    }
}

/// Reads the Responses API usage object; missing fields count as zero.
pub fn parse_usage(usage: Option<&Value>) -> TokenUsage {
    let Some(usage) = usage else {
        return TokenUsage::default();
    };
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    TokenUsage {
        input_tokens: number("/input_tokens"),
        cached_input_tokens: number("/input_tokens_details/cached_tokens"),
        output_tokens: number("/output_tokens"),
        reasoning_output_tokens: number("/output_tokens_details/reasoning_tokens"),
        total_tokens: number("/total_tokens"),
        // The Responses wire reports no cache writes.
        cache_write_input_tokens: 0,
    }
}
