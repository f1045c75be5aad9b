//! A rollout read back as what the model was asked and answered: the user prompt of every
//! turn, and every request as (instructions, input) with the output items it produced.

use std::path::Path;
use troupe_messages::events::EventMsg;
use troupe_messages::items::{ResponseItem, Role};
use troupe_messages::rollout::{RolloutLine, RolloutRecord};
use troupe_messages::settings::SessionSettings;

/// One model request of the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub instructions: String,
    /// The history the request carried.
    pub input: Vec<ResponseItem>,
    /// What the model answered (its items, in order).
    pub output: Vec<ResponseItem>,
}

/// Everything a replay needs from a rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Settings of the first turn (model, sandbox, approvals, instructions).
    pub settings: Option<Box<SessionSettings>>,
    /// The text the user typed to start each turn, in order.
    pub prompts: Vec<String>,
    pub requests: Vec<RecordedRequest>,
}

/// Whether the model wrote this item (as opposed to the user, the runtime or a tool).
pub fn model_authored(item: &ResponseItem) -> bool {
    match item {
        ResponseItem::Message { role, .. } => *role == Role::Assistant,
        ResponseItem::Reasoning { .. }
        | ResponseItem::FunctionCall { .. }
        | ResponseItem::CustomToolCall { .. }
        | ResponseItem::WebSearchCall { .. } => true,
        ResponseItem::FunctionCallOutput { .. } | ResponseItem::CustomToolCallOutput { .. } => {
            false
        }
    }
}

/// Reads a rollout file.
pub fn load(path: &Path) -> Result<Recording, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| format!("cannot read the rollout {}: {err}", path.display()))?;
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line: RolloutLine = serde_json::from_str(line).map_err(|err| {
            format!(
                "{}:{}: not a rollout line: {err}",
                path.display(),
                number + 1
            )
        })?;
        lines.push(line.record);
    }
    parse(lines).map_err(|err| format!("{}: {err}", path.display()))
}

/// Splits the records into prompts and requests: a run of model-authored items is one
/// response, and the history before it was that request's input.
pub fn parse(records: Vec<RolloutRecord>) -> Result<Recording, String> {
    let mut recording = Recording {
        settings: None,
        prompts: Vec::new(),
        requests: Vec::new(),
    };
    let mut history: Vec<ResponseItem> = Vec::new();
    let mut instructions = String::new();
    // Between a turn's context line and its TurnStarted event: the prompt being recorded.
    let mut starting: Option<Option<String>> = None;
    let mut open_response = false;
    for record in records {
        match record {
            RolloutRecord::SessionMeta(_) => {}
            RolloutRecord::TurnContext(context) => {
                instructions = context.settings.base_instructions.clone();
                recording.settings.get_or_insert(context.settings);
                starting = Some(None);
                open_response = false;
            }
            RolloutRecord::ResponseItem(item) => {
                if model_authored(&item) {
                    if !open_response {
                        recording.requests.push(RecordedRequest {
                            instructions: instructions.clone(),
                            input: history.clone(),
                            output: Vec::new(),
                        });
                        open_response = true;
                    }
                    if let Some(request) = recording.requests.last_mut() {
                        request.output.push(item.clone());
                    }
                } else {
                    open_response = false;
                    if let (
                        Some(prompt),
                        ResponseItem::Message {
                            role: Role::User,
                            content,
                            ..
                        },
                    ) = (starting.as_mut(), &item)
                    {
                        *prompt = Some(crate::sampler::history::message_text(content));
                    }
                }
                history.push(item);
            }
            RolloutRecord::Event(EventMsg::TurnStarted { .. }) => {
                if let Some(Some(prompt)) = starting.take() {
                    recording.prompts.push(prompt);
                }
            }
            RolloutRecord::Event(_) => {}
            RolloutRecord::Compacted(_) => {
                return Err(
                    "the thread was compacted; replaying a compacted thread is not \
                            supported"
                        .into(),
                )
            }
        }
    }
    if recording.prompts.is_empty() {
        return Err("the rollout holds no turn to replay".into());
    }
    Ok(recording)
}
