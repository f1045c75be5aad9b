//! What the model reads from an MCP tool result: its text, its structured content, and a
//! reference (never the bytes) for each image, audio clip or binary resource; cut to the
//! session's output budget, head and tail.

use rmcp::model::{CallToolResult, RawContent, ResourceContents};

/// The result as text for the model, and whether the tool reported success.
pub fn render(result: &CallToolResult, max_bytes: usize) -> (String, bool) {
    let mut parts: Vec<String> = Vec::new();
    for content in &result.content {
        parts.push(match &content.raw {
            RawContent::Text(text) => text.text.clone(),
            RawContent::Image(image) => format!(
                "[image: {}, {} bytes of base64 not shown]",
                image.mime_type,
                image.data.len()
            ),
            RawContent::Audio(audio) => format!(
                "[audio: {}, {} bytes of base64 not shown]",
                audio.mime_type,
                audio.data.len()
            ),
            RawContent::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!("[resource {uri}]\n{text}")
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => format!(
                    "[resource {uri}: {}, {} bytes of base64 not shown]",
                    mime_type.as_deref().unwrap_or("binary"),
                    blob.len()
                ),
            },
            RawContent::ResourceLink(link) => {
                format!("[resource link {} ({})]", link.uri, link.name)
            }
        });
    }
    if let Some(structured) = &result.structured_content {
        parts.push(format!("structured_content: {structured}"));
    }
    let text = parts.join("\n");
    let success = !result.is_error.unwrap_or(false);
    (truncate_middle(&text, max_bytes), success)
}

/// The result as the server sent it (`content`, `structuredContent`, `isError`), for
/// frontends (`exec --json`'s `mcp_tool_call` item), within about `max_bytes`: a long text
/// is cut head and tail, base64 data (images, audio, blobs) is replaced by a note of its
/// size, and structured content larger than the budget by a note.
pub fn bounded_result(result: &CallToolResult, max_bytes: usize) -> serde_json::Value {
    let mut value = serde_json::to_value(result).unwrap_or(serde_json::Value::Null);
    if let Some(blocks) = value.get_mut("content").and_then(|c| c.as_array_mut()) {
        for block in blocks {
            bound_block(block, max_bytes);
        }
    }
    if let Some(structured) = value.get_mut("structuredContent") {
        let size = structured.to_string().len();
        if size > max_bytes {
            *structured = serde_json::Value::String(format!(
                "[structured content of {size} bytes not shown]"
            ));
        }
    }
    value
}

fn bound_block(block: &mut serde_json::Value, max_bytes: usize) {
    let Some(object) = block.as_object_mut() else {
        return;
    };
    for key in ["data", "blob"] {
        if let Some(serde_json::Value::String(data)) = object.get_mut(key) {
            *data = format!("[{} bytes of base64 not shown]", data.len());
        }
    }
    if let Some(serde_json::Value::String(text)) = object.get_mut("text") {
        if text.len() > max_bytes {
            *text = truncate_middle(text, max_bytes);
        }
    }
    if let Some(resource) = object.get_mut("resource") {
        bound_block(resource, max_bytes);
    }
}

/// Shared with command output: one rule for how a long tool output is cut.
pub use troupe_messages::tools::truncate_middle;

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
