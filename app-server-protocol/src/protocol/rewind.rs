//! Cutting a thread back: Codex's `thread/revert` (the conversation before a turn) and
//! Troupe's `troupe/thread/rewind` (the work tree and/or the conversation, or the last rewind
//! undone).

use super::Thread;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertParams {
    pub thread_id: String,
    /// The wire id of the first turn to drop: the history keeps the turns before it.
    pub before_turn_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertResponse {
    /// The thread as it now is, without its turns (`thread/turns/list` pages them).
    pub thread: Thread,
    /// Always null: `thread/turns/list` and `thread/items/list` start from the newest
    /// without a cursor.
    pub turns_backwards_cursor: Option<String>,
    pub items_backwards_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertedNotification {
    pub thread_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewindParams {
    pub thread_id: String,
    /// Back to the state before this turn; absent with `undo`.
    #[serde(default)]
    pub to_turn: Option<u64>,
    /// Undo the thread's last rewind.
    #[serde(default)]
    pub undo: bool,
    /// Restore the work tree (default true).
    #[serde(default = "yes")]
    pub code: bool,
    /// Cut the conversation (default true).
    #[serde(default = "yes")]
    pub conversation: bool,
    /// Only say what would change.
    #[serde(default)]
    pub dry_run: bool,
    /// Rewind even over files changed since the last turn by something other than the agent.
    #[serde(default)]
    pub force: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewindResponse {
    pub thread_id: String,
    pub dry_run: bool,
    /// Paths of the work tree that changed (or would), with `added` / `removed` /
    /// `modified` / `modeChanged` / `typeChanged` as the restored tree sees them.
    pub changes: Vec<RewoundPath>,
    /// Paths that could not be restored, with why.
    pub failed: Vec<RewoundPath>,
    /// What checkpoints do not cover, with why.
    pub not_covered: Vec<RewoundPath>,
    /// Turns of the conversation before and after (absent when it was not rewound).
    pub turns_before: Option<u64>,
    pub turns_after: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewoundPath {
    pub path: String,
    pub detail: String,
}
