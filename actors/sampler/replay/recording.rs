//! A rollout read back as what the model was asked and answered: what started every turn
//! (a prompt, or a `/compact`), and every request as (instructions, input) with the output
//! items and usage it produced. A compaction is a request too: the history then the summary
//! prompt, answered by the summary that the `compacted` line records.

use crate::turn::compact::{apply_parts, SUMMARY_PREFIX, SUMMARY_PROMPT};
use std::path::Path;
use troupe_messages::events::EventMsg;
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::rollout::{CompactedRecord, RolloutLine, RolloutRecord};
use troupe_messages::settings::SessionSettings;
use troupe_messages::usage::TokenUsage;

/// One model request of the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub instructions: String,
    /// The history the request carried.
    pub input: Vec<ResponseItem>,
    /// What the model answered (its items, in order).
    pub output: Vec<ResponseItem>,
    /// The usage the provider reported for it (auto-compaction decides on it).
    pub usage: TokenUsage,
}

/// What started a recorded turn.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordedTurn {
    /// The text the user typed.
    Prompt(String),
    /// A compaction asked for between turns (`/compact`).
    Compact,
}

/// Everything a replay needs from a rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Settings of the first turn (model, sandbox, approvals, instructions).
    pub settings: Option<Box<SessionSettings>>,
    /// What started each turn, in order.
    pub turns: Vec<RecordedTurn>,
    pub requests: Vec<RecordedRequest>,
    /// Each compaction's summary item (as the history after it holds it) with the index of
    /// its request: a later request is placed by the summary its input holds.
    pub compactions: Vec<(ResponseItem, usize)>,
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

/// Splits the records into turns and requests: a run of model-authored items is one
/// response, and the history before it was that request's input; a compaction is a request
/// whose answer is its summary.
pub fn parse(records: Vec<RolloutRecord>) -> Result<Recording, String> {
    let mut recording = Recording {
        settings: None,
        turns: Vec::new(),
        requests: Vec::new(),
        compactions: Vec::new(),
    };
    let mut history: Vec<ResponseItem> = Vec::new();
    let mut instructions = String::new();
    // Between a turn's context line and its TurnStarted event: the prompt being recorded.
    let mut starting: Option<Option<String>> = None;
    // A turn that started without a prompt (a `/compact`, until a model answer says not).
    let mut promptless = false;
    let mut open_response = false;
    // The request whose usage is still to come, and a usage no request claimed yet (a
    // compaction's comes just before its `compacted` line).
    let mut awaiting_usage: Option<usize> = None;
    let mut unclaimed_usage: Option<TokenUsage> = None;
    for record in records {
        match record {
            RolloutRecord::SessionMeta(_) => {}
            RolloutRecord::TurnContext(context) => {
                instructions = context.settings.base_instructions.clone();
                recording.settings.get_or_insert(context.settings);
                starting = Some(None);
                promptless = false;
                open_response = false;
                awaiting_usage = None;
                unclaimed_usage = None;
            }
            RolloutRecord::ResponseItem(item) => {
                unclaimed_usage = None;
                if model_authored(&item) {
                    promptless = false;
                    if !open_response {
                        recording.requests.push(RecordedRequest {
                            instructions: instructions.clone(),
                            input: history.clone(),
                            output: Vec::new(),
                            usage: TokenUsage::default(),
                        });
                        awaiting_usage = Some(recording.requests.len() - 1);
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
            RolloutRecord::Event(EventMsg::TurnStarted { .. }) => match starting.take() {
                Some(Some(prompt)) => recording.turns.push(RecordedTurn::Prompt(prompt)),
                Some(None) => promptless = true,
                None => {}
            },
            RolloutRecord::Event(EventMsg::TokenCount { last, .. }) => {
                match awaiting_usage.take() {
                    Some(index) => {
                        if let Some(request) = recording.requests.get_mut(index) {
                            request.usage = last;
                        }
                    }
                    None => unclaimed_usage = Some(last),
                }
            }
            RolloutRecord::Event(_) => {}
            RolloutRecord::Compacted(compacted) => {
                let after = replaced(&history, &compacted)?;
                let summary = after
                    .iter()
                    .rev()
                    .find(|item| is_summary(item))
                    .cloned()
                    .ok_or("a compaction without a summary")?;
                let text = crate::sampler::history::message_text(match &summary {
                    ResponseItem::Message { content, .. } => content,
                    _ => return Err("a compaction without a summary".into()),
                });
                let mut input = history.clone();
                input.push(ResponseItem::user_text(SUMMARY_PROMPT));
                recording.requests.push(RecordedRequest {
                    instructions: instructions.clone(),
                    input,
                    output: vec![ResponseItem::Message {
                        id: None,
                        role: Role::Assistant,
                        content: vec![ContentItem::OutputText {
                            text: text.strip_prefix(SUMMARY_PREFIX).unwrap_or(&text).into(),
                        }],
                    }],
                    usage: unclaimed_usage.take().unwrap_or_default(),
                });
                recording
                    .compactions
                    .push((summary, recording.requests.len() - 1));
                if promptless {
                    recording.turns.push(RecordedTurn::Compact);
                    promptless = false;
                }
                open_response = false;
                awaiting_usage = None;
                history = after;
            }
        }
    }
    if recording.turns.is_empty() {
        return Err("the rollout holds no turn to replay".into());
    }
    Ok(recording)
}

/// The history a `compacted` line leaves.
fn replaced(
    before: &[ResponseItem],
    compacted: &CompactedRecord,
) -> Result<Vec<ResponseItem>, String> {
    match (&compacted.parts, &compacted.replacement_history) {
        (Some(parts), _) => apply_parts(before, parts)
            .map_err(|err| format!("a compaction cannot be applied: {err}")),
        (None, Some(history)) => Ok(history.clone()),
        (None, None) => Err("a compaction holds neither `parts` nor `replacement_history`".into()),
    }
}

/// Whether `item` is a compaction's summary (the user message that starts with the prefix).
pub fn is_summary(item: &ResponseItem) -> bool {
    first_user_text(item).is_some_and(|text| text.starts_with(SUMMARY_PREFIX))
}

/// Whether `item` is the summary prompt that ends a compaction request.
pub fn is_summary_prompt(item: &ResponseItem) -> bool {
    first_user_text(item) == Some(SUMMARY_PROMPT)
}

fn first_user_text(item: &ResponseItem) -> Option<&str> {
    match item {
        ResponseItem::Message {
            role: Role::User,
            content,
            ..
        } => content.first().and_then(ContentItem::text),
        _ => None,
    }
}
