//! The built-in `replay` provider (`troupe debug replay ROLLOUT [--check]`): answers each
//! request with the model output recorded for it, so a whole session re-runs offline, tools
//! and all. With `check`, a request whose instructions or input differ from the recording
//! (a prompt-cache regression, or a tool result that drifted) fails, naming the first
//! difference.
//!
//! A request is matched to the recording by how many model responses its input already
//! holds, so nothing has to be remembered between requests (each turn has its own sampler).
//! After a compaction the input holds its summary instead of the responses before it: it
//! counts from that compaction's request on.

pub mod recording;

use recording::{is_summary, is_summary_prompt, model_authored, RecordedRequest, Recording};
use serde_json::Value;
use troupe_messages::errors::ModelError;
use troupe_messages::items::ResponseItem;
use troupe_messages::sampling::{ModelRequest, SamplerUpdate};
use troupe_messages::settings::ReplaySource;
use troupe_messages::usage::TokenUsage;

/// Serves one request from the recording.
pub fn sample(
    source: &ReplaySource,
    request: &ModelRequest,
    mut on_update: impl FnMut(SamplerUpdate),
) {
    match answer(source, request) {
        Ok((items, usage)) => {
            for item in &items {
                if let Some(delta) = item.assistant_text() {
                    on_update(SamplerUpdate::TextDelta { delta });
                }
            }
            on_update(SamplerUpdate::Completed { items, usage });
        }
        Err(message) => on_update(SamplerUpdate::Failed {
            error: ModelError::ResponseFailed { message },
        }),
    }
}

fn answer(
    source: &ReplaySource,
    request: &ModelRequest,
) -> Result<(Vec<ResponseItem>, TokenUsage), String> {
    let recording = recording::load(&source.rollout)?;
    let index = request_index(&recording, &request.input)?;
    let Some(recorded) = recording.requests.get(index) else {
        return Err(format!(
            "replay: request {} has no recorded answer (the recording holds {} requests)",
            index + 1,
            recording.requests.len()
        ));
    };
    if source.check {
        if let Some(difference) = first_difference(recorded, request) {
            return Err(format!(
                "replay check failed at request {}: {difference}",
                index + 1
            ));
        }
    }
    Ok((recorded.output.clone(), recorded.usage))
}

/// Which recorded request a request with this input is: the responses its input holds, from
/// the compaction whose summary it holds if any. A compaction request (the history, then the
/// summary prompt) is the request that would have come next.
pub fn request_index(recording: &Recording, input: &[ResponseItem]) -> Result<usize, String> {
    let input = match input.split_last() {
        Some((last, history)) if is_summary_prompt(last) => history,
        _ => input,
    };
    let Some(at) = input.iter().rposition(is_summary) else {
        return Ok(responses_in(input));
    };
    let compaction = recording
        .compactions
        .iter()
        .rev()
        .find(|(summary, _)| summary == &input[at])
        .map(|(_, index)| *index)
        .ok_or_else(|| {
            "replay: the request's history holds a compaction summary the recording does not"
                .to_string()
        })?;
    Ok(compaction + 1 + responses_in(&input[at + 1..]))
}

/// How many model responses `input` holds (runs of model-authored items).
pub fn responses_in(input: &[ResponseItem]) -> usize {
    let mut count = 0;
    let mut inside = false;
    for item in input {
        let model = model_authored(item);
        if model && !inside {
            count += 1;
        }
        inside = model;
    }
    count
}

/// The first way `request` differs from what was recorded, in words; `None` when it is the
/// same (modulo what changes from run to run: command durations, today's date).
pub fn first_difference(recorded: &RecordedRequest, request: &ModelRequest) -> Option<String> {
    if recorded.instructions != request.instructions {
        let at = common_prefix(&recorded.instructions, &request.instructions);
        return Some(format!(
            "the instructions differ from character {at}: recorded `{}`, now `{}`",
            excerpt(&recorded.instructions, at),
            excerpt(&request.instructions, at)
        ));
    }
    for (position, (old, new)) in recorded.input.iter().zip(&request.input).enumerate() {
        let (old_value, new_value) = (normalized(old), normalized(new));
        if old_value == new_value {
            continue;
        }
        let (old_text, new_text) = (old_value.to_string(), new_value.to_string());
        let at = common_prefix(&old_text, &new_text);
        let what = match (old, new) {
            (
                ResponseItem::FunctionCallOutput { call_id, .. }
                | ResponseItem::CustomToolCallOutput { call_id, .. },
                ResponseItem::FunctionCallOutput { .. } | ResponseItem::CustomToolCallOutput { .. },
            ) => format!("the result of tool call `{call_id}` differs (environment drift)"),
            _ => format!("input item {position} differs"),
        };
        return Some(format!(
            "{what}: recorded `{}`, now `{}`",
            excerpt(&old_text, at),
            excerpt(&new_text, at)
        ));
    }
    if recorded.input.len() != request.input.len() {
        return Some(format!(
            "the input holds {} items, the recording {}",
            request.input.len(),
            recorded.input.len()
        ));
    }
    None
}

/// An item as JSON without what legitimately changes between runs: tool outputs' command
/// durations and the environment context's date.
fn normalized(item: &ResponseItem) -> Value {
    let mut value = serde_json::to_value(item).unwrap_or(Value::Null);
    scrub(&mut value);
    value
}

fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("duration_seconds");
            for inner in map.values_mut() {
                scrub(inner);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub),
        Value::String(text) => {
            if let Ok(mut parsed) = serde_json::from_str::<Value>(text) {
                if parsed.is_object() {
                    scrub(&mut parsed);
                    *text = parsed.to_string();
                    return;
                }
            }
            if let (Some(start), Some(end)) =
                (text.find("<current_date>"), text.find("</current_date>"))
            {
                if start < end {
                    text.replace_range(start + "<current_date>".len()..end, "");
                }
            }
        }
        _ => {}
    }
}

/// Byte index (on a char boundary) where `a` and `b` first differ.
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map(|((i, _), _)| i)
        .unwrap_or_else(|| a.len().min(b.len()))
}

/// Up to 80 characters of `text` from a little before `at`.
fn excerpt(text: &str, at: usize) -> String {
    let start = text[..at.min(text.len())]
        .char_indices()
        .rev()
        .nth(20)
        .map_or(0, |(i, _)| i);
    let piece: String = text[start..].chars().take(80).collect();
    if start > 0 {
        format!("…{piece}")
    } else {
        piece
    }
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod replay_tests;
