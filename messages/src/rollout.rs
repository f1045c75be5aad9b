//! The rollout file format: one JSON object per line, in the order things happened.
//!
//! `{"timestamp": "...", "type": "session_meta" | "response_item" | "event" | "turn_context",
//! "payload": {...}}` — the first line is always `session_meta`.

use crate::events::EventMsg;
use crate::ids::{ThreadId, TurnId};
use crate::items::ResponseItem;
use crate::settings::SessionSettings;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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

/// The history that replaced everything before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactedRecord {
    pub turn_id: TurnId,
    pub replacement_history: Vec<ResponseItem>,
}

/// Identity of a thread, written once at the top of its rollout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// Format version of this rollout file.
    pub version: u32,
    pub thread_id: ThreadId,
    #[serde(default)]
    pub parent_thread_id: Option<ThreadId>,
    pub cwd: PathBuf,
    pub model: String,
    pub model_provider: String,
    pub cli_version: String,
    pub created_at: String,
}

/// The frozen settings of one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnContextRecord {
    pub turn_id: TurnId,
    pub settings: Box<SessionSettings>,
}
