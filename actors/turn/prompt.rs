//! Pure helpers of the turn loop: building a request, reading tool calls out of a response.

use troupe_messages::ids::ThreadId;
use troupe_messages::items::{ContentItem, FunctionOutput, ResponseItem, Role};
use troupe_messages::ops::UserInput;
use troupe_messages::policy::{CollaborationMode, SandboxMode};
use troupe_messages::sampling::ModelRequest;
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::ToolSpec;
use troupe_messages::tools::{ToolCall, ToolOutput, ToolPayload};

/// The request of one sampling step: everything the model sees, frozen.
pub fn build_request(
    thread_id: ThreadId,
    settings: &SessionSettings,
    history: &[ResponseItem],
    tools: Vec<ToolSpec>,
) -> ModelRequest {
    ModelRequest {
        model: settings.model.clone(),
        instructions: settings.base_instructions.clone(),
        input: history.to_vec(),
        tools,
        parallel_tool_calls: true,
        prompt_cache_key: thread_id.to_string(),
        reasoning_effort: settings.context.reasoning_effort.clone(),
        verbosity: settings.context.model_verbosity.clone(),
        output_schema: settings.context.output_schema.clone(),
    }
}

/// Tools offered in plan mode: looking, not changing (commands run read-only there).
pub const PLAN_MODE_TOOLS: &[&str] = &[
    "shell",
    "exec_command",
    "write_stdin",
    "update_plan",
    "view_image",
    "request_user_input",
    "web_search",
];

/// The tools to advertise in a mode, and the settings its commands run under.
pub fn for_mode(
    settings: &SessionSettings,
    tools: Vec<ToolSpec>,
) -> (SessionSettings, Vec<ToolSpec>) {
    let mut settings = settings.clone();
    match settings.context.collaboration_mode {
        CollaborationMode::Default => (settings, tools),
        CollaborationMode::Plan => {
            settings.sandbox_mode = SandboxMode::ReadOnly;
            let tools = tools
                .into_iter()
                .filter(|t| PLAN_MODE_TOOLS.contains(&t.name()))
                .collect();
            (settings, tools)
        }
    }
}

/// One user message holding every piece of input, in order.
pub fn user_message(inputs: &[UserInput]) -> ResponseItem {
    ResponseItem::Message {
        id: None,
        role: Role::User,
        content: inputs
            .iter()
            .map(|input| match input {
                UserInput::Text { text } => ContentItem::InputText { text: text.clone() },
                UserInput::Image { image_url } => ContentItem::InputImage {
                    image_url: image_url.clone(),
                    // Codex asks for the image as it is, not downscaled.
                    detail: Some("original".into()),
                },
            })
            .collect(),
    }
}

/// The plain text of user input, for events.
pub fn input_text(inputs: &[UserInput]) -> String {
    inputs
        .iter()
        .filter_map(|input| match input {
            UserInput::Text { text } => Some(text.as_str()),
            UserInput::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tool calls a response asked for, in order.
pub fn tool_calls(items: &[ResponseItem]) -> Vec<ToolCall> {
    items
        .iter()
        .filter_map(|item| match item {
            ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            } => Some(ToolCall {
                call_id: call_id.clone(),
                tool_name: name.clone(),
                payload: ToolPayload::Function {
                    arguments: arguments.clone(),
                },
            }),
            ResponseItem::CustomToolCall {
                call_id,
                name,
                input,
                ..
            } => Some(ToolCall {
                call_id: call_id.clone(),
                tool_name: name.clone(),
                payload: ToolPayload::Custom {
                    input: input.clone(),
                },
            }),
            _ => None,
        })
        .collect()
}

/// The history item that carries a tool's output back to the model.
pub fn output_item(output: &ToolOutput) -> ResponseItem {
    if output.custom {
        ResponseItem::CustomToolCallOutput {
            call_id: output.call_id.clone(),
            output: output.content.clone(),
        }
    } else {
        ResponseItem::FunctionCallOutput {
            call_id: output.call_id.clone(),
            output: if output.parts.is_empty() {
                FunctionOutput::Text(output.content.clone())
            } else {
                FunctionOutput::Content(output.parts.clone())
            },
        }
    }
}
