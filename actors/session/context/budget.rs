//! Whether a thread's fixed context — base instructions and the initial context (permissions,
//! AGENTS.md, skills, environment) — and a new user message can fit at all.
//!
//! Compaction keeps the initial context and the current request, so when these alone reach
//! the compaction limit no compaction can help: the turn is refused before any request,
//! naming the biggest parts and their sizes. Token counts are estimates (~4 bytes a token),
//! made the way the compaction trigger makes them; the built-in tool specs are left out, as
//! the trigger leaves them out until the provider reports a count.

use crate::turn::tokens::estimate_item;
use troupe_messages::items::{ContentItem, FunctionOutput, ResponseItem};

/// How many parts an error names.
const NAMED_PARTS: usize = 3;

/// One part of the context every request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextPart {
    pub name: String,
    pub bytes: u64,
    pub tokens: u64,
}

/// The fixed parts: the base instructions and each initial item.
pub fn fixed_parts(instructions: &str, initial: &[ResponseItem]) -> Vec<ContextPart> {
    let mut parts = vec![ContextPart {
        name: "base instructions".into(),
        bytes: instructions.len() as u64,
        tokens: instructions.len() as u64 / 4,
    }];
    for item in initial {
        parts.push(ContextPart {
            name: part_name(item),
            bytes: text_bytes(item),
            tokens: estimate_item(item),
        });
    }
    parts
}

/// What an initial item is, from how it starts.
fn part_name(item: &ResponseItem) -> String {
    let text = first_text(item).unwrap_or_default();
    let known = [
        ("<permissions instructions>", "permissions"),
        ("# AGENTS.md instructions", "AGENTS.md instructions"),
        ("<skills>", "skills list"),
        ("<environment_context>", "environment context"),
        ("<collaboration_mode>", "collaboration mode"),
    ];
    known
        .iter()
        .find(|(prefix, _)| text.starts_with(prefix))
        .map(|(_, name)| (*name).to_string())
        .unwrap_or_else(|| "initial context item".to_string())
}

/// What one attached image counts for in the budget, in bytes of text (≈ 4 per token).
const IMAGE_BYTES_ESTIMATE: u64 = 6_000;

fn first_text(item: &ResponseItem) -> Option<&str> {
    match item {
        ResponseItem::Message { content, .. } => content.first().and_then(ContentItem::text),
        _ => None,
    }
}

/// Bytes of an item's text (its JSON size for other items).
pub fn text_bytes(item: &ResponseItem) -> u64 {
    match item {
        ResponseItem::Message { content, .. } => content
            .iter()
            .map(|c| match c {
                ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                    text.len() as u64
                }
                // Counted as the model is billed for a large image (≈ 1 500 tokens), not by
                // the size of its base64 text.
                ContentItem::InputImage { .. } => IMAGE_BYTES_ESTIMATE,
            })
            .sum(),
        ResponseItem::FunctionCallOutput {
            output: FunctionOutput::Content(parts),
            ..
        } => parts
            .iter()
            .map(|part| part.text().map_or(IMAGE_BYTES_ESTIMATE, |t| t.len() as u64))
            .sum(),
        other => serde_json::to_vec(other).map_or(0, |b| b.len() as u64),
    }
}

/// The limit a thread's context must stay under, and the window it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// Compaction limit (never above the window).
    pub limit: u64,
    pub window: Option<u64>,
}

impl Room {
    fn describe(&self) -> String {
        match self.window {
            Some(window) if window == self.limit => {
                format!("the context window of {window} tokens")
            }
            Some(window) => format!(
                "the auto-compaction limit of {} tokens (context window {window} tokens)",
                self.limit
            ),
            None => format!("the auto-compaction limit of {} tokens", self.limit),
        }
    }
}

/// Ok when the fixed parts leave room under the limit; otherwise the message for the user,
/// naming the biggest parts.
pub fn check_fixed(parts: &[ContextPart], room: Room) -> Result<(), String> {
    let total: u64 = parts.iter().map(|p| p.tokens).sum();
    if total < room.limit {
        return Ok(());
    }
    let mut biggest: Vec<&ContextPart> = parts.iter().collect();
    biggest.sort_by_key(|part| std::cmp::Reverse(part.tokens));
    let named: Vec<String> = biggest
        .iter()
        .take(NAMED_PARTS)
        .map(|p| format!("{} (about {} tokens, {} bytes)", p.name, p.tokens, p.bytes))
        .collect();
    Err(format!(
        "the initial context alone (about {total} tokens) does not fit under {}; the biggest \
         parts: {}. Shorten them (AGENTS.md, project_doc_max_bytes, instructions) or raise \
         model_context_window / model_auto_compact_token_limit",
        room.describe(),
        named.join(", ")
    ))
}

/// Ok when `input` (the new user message and the skill bodies it brings) fits beside the
/// fixed parts; otherwise the refusal, with the message's size and the window's.
pub fn check_input(fixed_tokens: u64, input: &[ResponseItem], room: Room) -> Result<(), String> {
    let tokens: u64 = input.iter().map(estimate_item).sum();
    if fixed_tokens + tokens < room.limit {
        return Ok(());
    }
    let bytes: u64 = input.iter().map(text_bytes).sum();
    Err(format!(
        "the message is too large: about {tokens} tokens ({bytes} bytes), and with the initial \
         context (about {fixed_tokens} tokens) it does not fit under {}; nothing was sent. \
         Shorten it, or attach big files by path for the agent to read",
        room.describe()
    ))
}
