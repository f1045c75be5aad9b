//! What a spawn is asked and gives back, shared by the local spawn (`spawn.rs`) and the
//! remote one (`remote_spawn.rs`), so neither imports the other's types.

use super::tree::{AgentTree, Caller};
use ractor::ActorRef;
use serde::Deserialize;
use std::sync::Arc;
use troupe_messages::mailboxes::{SessionMsg, ThreadManagerMsg};
use troupe_messages::settings::SessionSettings;

/// Arguments of `spawn_agent`, as Codex names them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    pub task_name: String,
    pub message: String,
    #[serde(default)]
    pub fork_turns: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    #[serde(default)]
    pub agent_type: Option<String>,
    /// Run in a new git worktree of the caller's repository, on a branch of its own.
    #[serde(default)]
    pub worktree: bool,
    /// `local`, `remote` (a worker of the pool) or `auto`; default `[cluster] placement`.
    #[serde(default)]
    pub placement: Option<String>,
}

/// Whether the child starts from its parent's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkTurns {
    All,
    None,
}

pub fn parse_fork_turns(value: Option<&str>) -> Result<ForkTurns, String> {
    match value.map(str::trim) {
        None | Some("all") => Ok(ForkTurns::All),
        Some("none") => Ok(ForkTurns::None),
        Some(other) => Err(format!(
            "`fork_turns` `{other}` is not supported; use `all` (the default) or `none`"
        )),
    }
}

/// A spawned child, as the tool reports it.
#[derive(Debug, Clone)]
pub struct Spawned {
    pub task_path: String,
    pub thread_id: troupe_messages::ids::ThreadId,
    pub nickname: String,
    /// Something the model should know about how the child was started (uncommitted
    /// changes a remote child's git workspace does not carry).
    pub warning: Option<String>,
}

/// Everything a spawn needs from its caller.
pub struct SpawnContext<'a> {
    pub tree: &'a Arc<AgentTree>,
    pub manager: &'a ActorRef<ThreadManagerMsg>,
    pub caller: &'a Caller,
    pub caller_session: &'a ActorRef<SessionMsg>,
    pub settings: &'a SessionSettings,
}

/// The child's first user message: its task, with its canonical path.
pub fn task_text(task_path: &str, parent_path: &str, message: &str) -> String {
    format!(
        "[You are agent `{task_path}`, spawned by `{parent_path}`; your final answer is \
         delivered to it.]\n\n{message}"
    )
}
