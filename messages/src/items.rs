//! Model items: what the history is made of, in the OpenAI Responses API shapes.
//!
//! The history sent to the model is a list of [`ResponseItem`]s; the rollout stores the same
//! items verbatim, so resume rebuilds exactly what the model saw.

use serde::{Deserialize, Serialize};

/// One entry of the model-visible history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem {
    /// A message from the user, the developer (runtime) or the assistant.
    Message {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        role: Role,
        content: Vec<ContentItem>,
    },
    /// The model's reasoning: a readable summary, and encrypted content to send back.
    Reasoning {
        #[serde(default)]
        id: String,
        #[serde(default)]
        summary: Vec<ReasoningSummary>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    /// A call of a JSON function tool; `arguments` is the raw JSON text the model wrote.
    FunctionCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        call_id: String,
        name: String,
        arguments: String,
    },
    /// What a function call returned: text for the model, or content parts (`view_image`).
    FunctionCallOutput {
        call_id: String,
        output: FunctionOutput,
    },
    /// A call of a freeform (custom grammar) tool, such as `apply_patch`.
    CustomToolCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        call_id: String,
        name: String,
        input: String,
    },
    /// What a custom tool call returned.
    CustomToolCallOutput { call_id: String, output: String },
    /// A web search the provider ran (`web_search = "live"|"cached"`, Responses wire):
    /// kept and sent back as it came, so the model sees its own searches.
    WebSearchCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<serde_json::Value>,
    },
}

/// A function call's output as the Responses API takes it: a string, or a list of content
/// parts (Codex sends an image a tool attached as `[{"type":"input_image",…}]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FunctionOutput {
    Text(String),
    Content(Vec<ContentItem>),
}

impl FunctionOutput {
    /// The output as text: the string, or the text parts joined (images left out).
    pub fn text(&self) -> String {
        match self {
            FunctionOutput::Text(text) => text.clone(),
            FunctionOutput::Content(parts) => parts.iter().filter_map(ContentItem::text).collect(),
        }
    }

    /// The image parts (`data:` URLs), in order; none for a text output.
    pub fn images(&self) -> Vec<&str> {
        match self {
            FunctionOutput::Text(_) => Vec::new(),
            FunctionOutput::Content(parts) => parts
                .iter()
                .filter_map(|part| match part {
                    ContentItem::InputImage { image_url, .. } => Some(image_url.as_str()),
                    ContentItem::InputText { .. } | ContentItem::OutputText { .. } => None,
                })
                .collect(),
        }
    }
}

impl From<String> for FunctionOutput {
    fn from(text: String) -> Self {
        FunctionOutput::Text(text)
    }
}

impl From<&str> for FunctionOutput {
    fn from(text: &str) -> Self {
        FunctionOutput::Text(text.to_string())
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    Developer,
    System,
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    /// Text written by the user or the runtime.
    InputText { text: String },
    /// Text written by the model.
    OutputText { text: String },
    /// An image the user attached (`exec -i`): a `data:` URL; `detail` as Codex sends it.
    InputImage {
        image_url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

impl ContentItem {
    /// The text of a text part; `None` for an image.
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => Some(text),
            ContentItem::InputImage { .. } => None,
        }
    }
}

/// One paragraph of a reasoning summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningSummary {
    SummaryText { text: String },
}

impl ResponseItem {
    /// A user message with one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        ResponseItem::Message {
            id: None,
            role: Role::User,
            content: vec![ContentItem::InputText { text: text.into() }],
        }
    }

    /// A developer (runtime-authored) message with one text part.
    pub fn developer_text(text: impl Into<String>) -> Self {
        ResponseItem::Message {
            id: None,
            role: Role::Developer,
            content: vec![ContentItem::InputText { text: text.into() }],
        }
    }

    /// The concatenated text of an assistant message, if this is one.
    pub fn assistant_text(&self) -> Option<String> {
        match self {
            ResponseItem::Message {
                role: Role::Assistant,
                content,
                ..
            } => Some(content.iter().filter_map(ContentItem::text).collect()),
            _ => None,
        }
    }

    /// The call id when this item is a tool call.
    pub fn tool_call_id(&self) -> Option<&str> {
        match self {
            ResponseItem::FunctionCall { call_id, .. }
            | ResponseItem::CustomToolCall { call_id, .. } => Some(call_id),
            _ => None,
        }
    }
}
