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

/// Shared with command output: one rule for how a long tool output is cut.
pub use troupe_messages::tools::truncate_middle;

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
