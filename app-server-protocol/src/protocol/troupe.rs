//! Troupe's own methods and notifications (`troupe/*`, `thread/shellCommand`): a lagging client, a
//! thread another process holds, the last turn of threads no client has open.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `troupe/lagged`: this client fell behind on a thread and missed notifications; call
/// `thread/resume` (or `thread/read`) to catch up from the rollout.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaggedNotification {
    pub thread_id: String,
    pub dropped: u64,
}

/// `troupe/thread/held`, right after `thread/resume`'s answer for a thread another process
/// holds: this server follows it (its history and what the holder records from now on) and
/// forwards steering, interrupts and approval answers there; it starts no turns of it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadHeldNotification {
    pub thread_id: String,
    pub held_by: HeldBy,
}

/// `thread/shellCommand`: the user's own command, run in the thread as the TUI's `!cmd`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadShellCommandParams {
    pub thread_id: String,
    pub command: String,
    /// Killed after this many milliseconds (an hour when absent or null; 0 at once).
    #[serde(default)]
    pub timeout_ms: Option<i64>,
}

/// `troupe/thread/lastTurns`: how the last turn of each thread ended, from the thread index,
/// for threads no client has open (their `status` is only `notLoaded`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastTurnsParams {
    /// At most 200 ids; unknown ones are left out of the answer.
    pub thread_ids: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastTurnsResponse {
    pub data: Vec<LastTurn>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastTurn {
    pub thread_id: String,
    pub status: LastTurnStatus,
    /// Another live process holds the thread open (a TUI, another app-server): it cannot be
    /// opened here, and `status` says whether a turn of it runs there now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<HeldBy>,
}

/// The process that holds a thread open.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeldBy {
    pub pid: u32,
    /// Its command line's first words (`troupe app-server …`), when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// The index's account of a thread's last turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LastTurnStatus {
    /// No turn has run yet.
    New,
    /// A process runs a turn of it now (this server or another): not merely holds it open.
    Running,
    Completed,
    Interrupted,
    Failed,
    /// The process died during the turn.
    Incomplete,
}
