//! What the wires share about the history: where a reasoning item came from, the text of a
//! message, and how a freeform tool travels on wires that only know JSON functions.

use serde_json::{json, Value};
use troupe_messages::items::{ContentItem, ResponseItem};
use troupe_messages::tools::ToolSpec;

/// Id prefix of reasoning items read from a Chat Completions `reasoning_content`.
pub const CHAT_REASONING_ID_PREFIX: &str = "chat_rs_";
/// Prefix of `encrypted_content` holding an Anthropic thinking block's signature.
pub const ANTHROPIC_SIGNATURE_PREFIX: &str = "anthropic-signature:";
/// Id prefix of reasoning items read from Anthropic thinking blocks.
pub const ANTHROPIC_REASONING_ID_PREFIX: &str = "anthropic_rs_";

/// Whether a reasoning item was written by a wire other than the Responses API (it cannot be
/// sent back to that API: it has no OpenAI id or encrypted content).
pub fn foreign_reasoning(item: &ResponseItem) -> bool {
    match item {
        ResponseItem::Reasoning {
            id,
            encrypted_content,
            ..
        } => {
            id.starts_with(CHAT_REASONING_ID_PREFIX)
                || id.starts_with(ANTHROPIC_REASONING_ID_PREFIX)
                || encrypted_content
                    .as_deref()
                    .is_some_and(|c| c.starts_with(ANTHROPIC_SIGNATURE_PREFIX))
        }
        _ => false,
    }
}

/// The text of a message's parts, joined.
pub fn message_text(content: &[ContentItem]) -> String {
    content.iter().filter_map(ContentItem::text).collect()
}

/// The JSON-Schema of the one-argument function a freeform tool becomes on wires without
/// freeform tools: `{"input": "<the raw text>"}`.
pub fn freeform_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "The whole input of the tool, as raw text (for apply_patch: the patch, from `*** Begin Patch` to `*** End Patch`).",
            }
        },
        "required": ["input"],
        "additionalProperties": false,
    })
}

/// The arguments a freeform call's `input` travels as.
pub fn freeform_arguments(input: &str) -> String {
    json!({ "input": input }).to_string()
}

/// Names of the freeform tools of a request: calls of these come back as custom calls.
pub fn custom_tool_names(tools: &[ToolSpec]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|tool| match tool {
            ToolSpec::Custom { name, .. } => Some(name.clone()),
            ToolSpec::Function { .. } | ToolSpec::WebSearch { .. } => None,
        })
        .collect()
}

/// What a call assembled from a JSON-function wire becomes: a custom call when the tool is
/// freeform (its `input` taken out of the arguments), else a function call. `Err` says why
/// the arguments cannot be a complete call (cut off, or a freeform call without `input`).
pub fn assembled_call(
    call_id: String,
    name: String,
    arguments: String,
    custom_tools: &[String],
) -> Result<ResponseItem, String> {
    let is_custom = custom_tools.contains(&name);
    // Some servers send no argument text for a call without arguments.
    let arguments = if arguments.trim().is_empty() && !is_custom {
        "{}".to_string()
    } else {
        arguments
    };
    let parsed = serde_json::from_str::<Value>(&arguments);
    if let Err(err) = &parsed {
        // Cut off (never closed): the response is incomplete. A complete but malformed
        // argument text goes to the tool, which tells the model what is wrong.
        if err.is_eof() {
            return Err(format!(
                "the arguments of tool call `{call_id}` ({name}) never closed: {} bytes of \
                 incomplete JSON",
                arguments.len()
            ));
        }
    }
    if is_custom {
        let input = parsed
            .ok()
            .and_then(|value| {
                value
                    .get("input")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .ok_or_else(|| {
                format!("freeform tool call `{call_id}` ({name}) has no string `input` argument")
            })?;
        return Ok(ResponseItem::CustomToolCall {
            id: None,
            call_id,
            name,
            input,
        });
    }
    Ok(ResponseItem::FunctionCall {
        id: None,
        call_id,
        name,
        arguments,
    })
}
