//! The rollout file format: one JSON object per line, in the order things happened.
//!
//! `{"timestamp": "...", "type": "session_meta" | "response_item" | "event" | "turn_context" |
//! "compacted", "payload": {...}}` — the first line is always `session_meta`.
//!
//! Versioning: `session_meta.version` is the format the file was written in
//! ([`ROLLOUT_FORMAT_VERSION`]). Fields added later are optional (`#[serde(default)]`), so
//! older lines still load; a reader skips line types it does not know (with a warning) and
//! refuses to append to a file written in a newer format.

use crate::events::EventMsg;
use crate::ids::{ThreadId, TurnId};
use crate::items::ResponseItem;
use crate::settings::SessionSettings;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Format version written into new rollouts. Readers accept this and every older version.
///
/// 2: a `compacted` line names what it keeps of the history it replaces (`parts`) instead of
/// repeating that history (`replacement_history`, still read).
pub const ROLLOUT_FORMAT_VERSION: u32 = 2;

/// One line of a rollout file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutLine {
    /// RFC 3339 time the line was produced.
    pub timestamp: String,
    #[serde(flatten)]
    pub record: RolloutRecord,
}

/// What a rollout line holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "payload", rename_all = "snake_case")]
pub enum RolloutRecord {
    /// First line: who this thread is.
    SessionMeta(SessionMeta),
    /// One history item, exactly as sent to / received from the model.
    ResponseItem(ResponseItem),
    /// The settings a turn ran under.
    TurnContext(TurnContextRecord),
    /// An event worth replaying (turn boundaries, errors, usage).
    Event(EventMsg),
    /// Compaction: from here on the history is `replacement_history`.
    Compacted(CompactedRecord),
}

/// The `type` of every line this build understands, as serde names the variants of
/// [`RolloutRecord`] (read from the derived deserializer, so a new variant is known at once).
pub fn record_types() -> &'static [&'static str] {
    static TYPES: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    TYPES.get_or_init(|| {
        // A tag no variant has: the derived deserializer answers with the list it expected.
        let probe =
            serde::de::value::MapDeserializer::<_, TagProbe>::new(std::iter::once(("type", "")));
        match RolloutRecord::deserialize(probe) {
            Err(TagProbe(Some(types))) => types,
            _ => &[],
        }
    })
}

/// The error of the probe in [`record_types`]: keeps the variant names serde reports.
#[derive(Debug)]
struct TagProbe(Option<&'static [&'static str]>);

impl std::fmt::Display for TagProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rollout record type probe")
    }
}

impl std::error::Error for TagProbe {}

impl serde::de::Error for TagProbe {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        TagProbe(None)
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        TagProbe(Some(expected))
    }
}

/// A compaction: the history that replaces everything before it.
///
/// Written as `parts` (what is kept of the history being replaced, by position, plus the new
/// items), so a compaction costs the rollout its summary, not another copy of the history.
/// Format 1 wrote the whole new history as `replacement_history`; both are read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactedRecord {
    pub turn_id: TurnId,
    /// The new history in full (format 1, and a fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement_history: Option<Vec<ResponseItem>>,
    /// The new history, built from the one it replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Vec<HistoryPart>>,
}

/// One piece of a history rebuilt by a compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HistoryPart {
    /// Items `start .. start + count` of the history being replaced.
    Kept { start: usize, count: usize },
    /// An item that is new (the summary).
    New { item: ResponseItem },
}

/// Identity of a thread, written once at the top of its rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// Format version of this rollout file.
    pub version: u32,
    pub thread_id: ThreadId,
    /// The thread this one was forked from.
    #[serde(default)]
    pub parent_thread_id: Option<ThreadId>,
    /// Last turn of the parent copied into this fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_at_turn: Option<TurnId>,
    pub cwd: PathBuf,
    pub model: String,
    pub model_provider: String,
    /// SHA-256 (hex) of the base instructions the thread started with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_digest: Option<String>,
    pub cli_version: String,
    pub created_at: String,
    /// The Git state of `cwd` when the thread started, when it is in a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitInfo>,
    /// A sub-agent's place in its tree (`parent_thread_id` is its parent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<crate::agents::AgentMeta>,
}

/// Branch and commit of the working directory's repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitInfo {
    /// Checked-out branch; none on a detached HEAD.
    #[serde(default)]
    pub branch: Option<String>,
    /// Full commit hash of HEAD; none in a repository without commits.
    #[serde(default)]
    pub commit: Option<String>,
}

/// The frozen settings of one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnContextRecord {
    pub turn_id: TurnId,
    pub settings: Box<SessionSettings>,
}
