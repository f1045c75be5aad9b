//! What the thread index knows about a thread: one summary per rollout, for `list`, `resume
//! --last` and clients' thread pickers.

use crate::ids::ThreadId;
use crate::usage::TokenUsage;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where a thread stands, as far as its rollout tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadStatus {
    /// No turn has run yet.
    New,
    /// A process is running a turn of it now.
    Running,
    /// The last turn finished normally.
    Completed,
    /// The last turn was interrupted or shut down.
    Interrupted,
    /// The last turn failed.
    Failed,
    /// The last turn has no ending: the process died during it.
    Incomplete,
}

impl ThreadStatus {
    /// The lowercase name shown by `troupe list`.
    pub fn as_str(self) -> &'static str {
        match self {
            ThreadStatus::New => "new",
            ThreadStatus::Running => "running",
            ThreadStatus::Completed => "completed",
            ThreadStatus::Interrupted => "interrupted",
            ThreadStatus::Failed => "failed",
            ThreadStatus::Incomplete => "incomplete",
        }
    }
}

/// One thread as the index stores and `troupe list --json` prints it.
///
/// Ids are written as their text (also in the index's bincode, where a bare `Uuid` would be
/// 16 raw bytes) and paths as strings: the bytes are those of the earlier all-`String` form,
/// so an index written before reads back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSummary {
    /// Thread id (UUID).
    #[serde(with = "id_as_text")]
    pub id: ThreadId,
    /// The first user message, shortened.
    pub title: String,
    pub cwd: PathBuf,
    /// The thread this one was forked from.
    #[serde(with = "optional_id_as_text")]
    pub parent: Option<ThreadId>,
    /// RFC 3339.
    pub created_at: String,
    /// Milliseconds since the Unix epoch of the last line written.
    pub updated_at_ms: i64,
    pub status: ThreadStatus,
    /// Absolute path of the rollout file.
    pub rollout_path: PathBuf,
    /// The rollout lives under `archived_sessions/`.
    pub archived: bool,
    /// Turns started so far.
    pub turns: u64,
    /// Token totals over all turns.
    pub tokens: TokenUsage,
    /// Size of the rollout when this summary was taken; a different size means stale.
    pub rollout_bytes: u64,
    /// A sub-agent's task path (`/root/explore`); none for a root thread. (Always written:
    /// the index stores summaries with bincode, which cannot skip fields.)
    #[serde(default)]
    pub task_path: Option<String>,
    /// Depth in its agent tree (0 for a root).
    #[serde(default)]
    pub depth: u32,
    /// A sub-agent's readable name.
    #[serde(default)]
    pub nickname: Option<String>,
    /// The model provider the thread was started with (its `session_meta`).
    #[serde(default)]
    pub model_provider: String,
}

/// A thread id as its hyphenated text, whatever the format.
mod id_as_text {
    use crate::ids::ThreadId;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(id: &ThreadId, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(id)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ThreadId, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse()
            .map_err(|err| D::Error::custom(format!("thread id `{text}`: {err}")))
    }
}

/// An optional thread id as optional text.
mod optional_id_as_text {
    use crate::ids::ThreadId;
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        id: &Option<ThreadId>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => serializer.serialize_some(&id.to_string()),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<ThreadId>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| {
                text.parse()
                    .map_err(|err| D::Error::custom(format!("thread id `{text}`: {err}")))
            })
            .transpose()
    }
}
