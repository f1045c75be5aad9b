//! What travels over NATS, as JSON. Every payload from the network is parsed into these
//! types and anything else is a `Malformed` error, never a panic.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use troupe_messages::agents::AgentMeta;
use troupe_messages::ids::ThreadId;
use troupe_messages::ops::{ReviewDecision, UserInput};

/// Header saying what a message on a thread's subject is.
pub const KIND_HEADER: &str = "Troupe-Kind";
/// Header of a rollout line: the rollout's path relative to `TROUPE_HOME`.
pub const ROLLOUT_HEADER: &str = "Troupe-Rollout";

/// Header of one part of a message too large for one (`k/n`, 1-based); the follower
/// delivers the message once its last part came.
pub const PART_HEADER: &str = "Troupe-Part";

/// The kinds of message on a thread's subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A serialized `troupe_messages::events::Event`.
    Event,
    /// Lines of the thread's rollout, as the worker wrote them, separated by `\n` (the
    /// lines the worker found written at one look go as one message: one append for a
    /// burst). A rollout line never holds a raw newline (JSON escapes it).
    Rollout,
    /// The thread has finished on its worker; nothing follows. Payload: [`End`].
    End,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Event => "event",
            Kind::Rollout => "rollout",
            Kind::End => "end",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "event" => Some(Kind::Event),
            "rollout" => Some(Kind::Rollout),
            "end" => Some(Kind::End),
            _ => None,
        }
    }
}

/// A request to run a whole thread on some worker of the pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpawnRequest {
    /// Chosen by the requester; the answer is stored under `spawn.<request_id>`.
    pub request_id: String,
    /// Where the thread works: a path the requester and the workers share. With a git
    /// [`workspace`](Self::workspace) only the requester's directory, for the record.
    pub cwd: PathBuf,
    /// The first turn's input.
    pub items: Vec<UserInput>,
    /// The thread's secret (64 hex digits, see `sign.rs`): the keys every message of the
    /// thread is signed with come from it. A request without one is refused.
    #[serde(default)]
    pub secret: String,
    /// Unix ms after which no worker may take the request (the requester has given up).
    pub deadline_ms: i64,
    /// Set when the thread is a sub-agent of a thread on the requester's machine
    /// (`spawn_agent {placement: "remote"}`): its rollout links to its parent, and its
    /// depth counts towards the worker's own `[agents] max_depth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<RemoteAgent>,
    /// Set with `[cluster] workspace = "git"`: the worker checks this commit out in a
    /// worktree of its own instead of working in `cwd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<GitWorkspace>,
}

/// A workspace carried as a git remote and commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitWorkspace {
    /// The remote's URL (or path) as the requester resolved it; the worker fetches from it
    /// and pushes its branch to it with its own git credentials.
    pub remote: String,
    /// The ref the requester pushed the commit under (`refs/troupe/base/<request>`), so the
    /// worker can fetch it whatever the requester's branches are.
    pub base_ref: String,
    /// The commit to check out (full SHA).
    pub commit: String,
    /// The requester's directory relative to its repository's top (empty at the top).
    pub relative: PathBuf,
}

/// What became of a git workspace's work, carried by [`End`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WorkspaceOutcome {
    /// Committed on `branch` and pushed to the remote (`refs/heads/<branch>`).
    Pushed {
        branch: String,
        /// `git diff --stat` from the base commit ("no changes" when empty).
        diffstat: String,
    },
    /// The work could not be committed or pushed; it stays on the worker.
    Failed { error: String },
}

/// Where a remote sub-agent sits in its tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteAgent {
    pub parent_thread_id: ThreadId,
    pub meta: AgentMeta,
}

/// The answer to a spawn request: which thread it became, on which worker, or why the
/// worker that took it could not start it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpawnAnswer {
    pub worker: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A worker's heartbeat (`worker.<id>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerStatus {
    pub worker: String,
    pub slots: u32,
    pub free: u32,
    pub labels: BTreeMap<String, String>,
    pub at_ms: i64,
}

/// The value of `lease.<thread>`: who holds it, renewed when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRecord {
    pub worker: String,
    pub at_ms: i64,
    /// Where the thread works (a worker taking the thread over needs it).
    pub cwd: PathBuf,
    /// A git workspace: a worker taking the thread over checks the base commit out again
    /// (`cwd` is a worktree of the first holder's machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<GitWorkspace>,
}

/// The payload of [`Kind::End`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct End {
    /// Whether the turn completed.
    pub succeeded: bool,
    /// For a git workspace: the branch the work was pushed to, or why it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceOutcome>,
}

/// A request to a thread's worker (`troupe.<pool>.thread.<id>.ops`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThreadRequest {
    /// Stop the running turn (the thread then ends on its worker).
    Interrupt,
    /// Input for the thread (a sub-agent's `send_message` / `followup_task`): joins the
    /// running turn at its next step; refused once the turn is over.
    AgentInput {
        items: Vec<UserInput>,
        start_turn: bool,
    },
    /// Close the thread (`close_agent`): its running turn stops and it ends.
    Shutdown,
    /// The decision on one of the thread's approval requests, from whoever supervises the
    /// root of a remote sub-agent's tree.
    Approval {
        call_id: String,
        decision: ReviewDecision,
    },
}

/// The worker's reply to a [`ThreadRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadReply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
