//! Sub-agents: where a thread sits in its agent tree, the `[agents]` settings, and what a
//! child reports to its parent.
//!
//! A root thread has task path `/root` and depth 0; a child spawned by `/root` with task name
//! `explore` is `/root/explore` at depth 1. Settings of the tree (limits, roles) travel with
//! every thread's `SessionSettings`, so a child inherits them from its parent.

use crate::ids::ThreadId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Task path of every root thread.
pub const ROOT_TASK_PATH: &str = "/root";
/// Default deepest level of a child (the root is 0).
pub const DEFAULT_MAX_DEPTH: u32 = 2;
/// Default number of live sub-agents under one root.
pub const DEFAULT_MAX_THREADS: usize = 8;

/// `[agents]` plus this thread's place in its tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentSettings {
    /// Offer the collaboration tools (`[agents] enabled`, default true).
    pub enabled: bool,
    /// Deepest level a child may have (`[agents] max_depth`, default 2).
    pub max_depth: u32,
    /// Live sub-agents per root (`[agents] max_threads`, default 8).
    pub max_threads: usize,
    /// Commands (tool processes) running at once across every agent of the process
    /// (`[agents] max_concurrent_commands`); none means 4 × the CPU cores.
    pub max_concurrent_commands: Option<usize>,
    /// Roles a child may be spawned with (`[agents.roles.<name>]`), built-ins included.
    pub roles: BTreeMap<String, AgentRole>,
    /// This thread's task path (`/root` for a root).
    pub task_path: String,
    /// This thread's depth (0 for a root).
    pub depth: u32,
    /// Tokens the whole tree (root and agents) may use before new spawns and follow-up
    /// tasks are refused (`[agents] token_budget`); none means no budget.
    pub token_budget: Option<u64>,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_depth: DEFAULT_MAX_DEPTH,
            max_threads: DEFAULT_MAX_THREADS,
            max_concurrent_commands: None,
            roles: builtin_roles(),
            task_path: ROOT_TASK_PATH.to_string(),
            depth: 0,
            token_budget: None,
        }
    }
}

/// One role (`agent_type` of `spawn_agent`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentRole {
    /// Shown to the model in the `spawn_agent` description.
    pub description: String,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    /// Narrows the child's sandbox; a mode wider than the parent's is refused.
    pub sandbox_mode: Option<crate::policy::SandboxMode>,
    /// Prepended to the child's task as a developer message.
    pub developer_instructions: Option<String>,
}

/// The roles every runtime knows; config entries of the same name replace them.
pub fn builtin_roles() -> BTreeMap<String, AgentRole> {
    let mut roles = BTreeMap::new();
    roles.insert(
        "default".to_string(),
        AgentRole {
            description: "Inherits the parent's model and permissions.".into(),
            ..AgentRole::default()
        },
    );
    roles.insert(
        "explorer".to_string(),
        AgentRole {
            description: "Reads and searches the code; runs under a read-only sandbox.".into(),
            sandbox_mode: Some(crate::policy::SandboxMode::ReadOnly),
            developer_instructions: Some(
                "You are an explorer: read and search, change nothing, and answer with what \
                 you found and where (paths and lines)."
                    .into(),
            ),
            ..AgentRole::default()
        },
    );
    roles.insert(
        "worker".to_string(),
        AgentRole {
            description: "Makes changes within the parent's permissions.".into(),
            developer_instructions: Some(
                "You are a worker: make the change you were asked for, keep to the files of \
                 your task, and answer with what you changed."
                    .into(),
            ),
            ..AgentRole::default()
        },
    );
    roles
}

/// Where a child sits, written in its rollout's `session_meta`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentMeta {
    /// The root of its tree.
    pub root_thread_id: ThreadId,
    pub task_path: String,
    pub depth: u32,
    /// A readable name for people (`troupe list --tree`, exec's stderr).
    pub nickname: String,
}

/// Where a collaboration tool call stands (`collab_tool_call` items of `exec --json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollabCallStatus {
    InProgress,
    Completed,
    Failed,
}

/// An agent's state as a collaboration call saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollabAgentState {
    pub status: AgentStatus,
    /// Its final answer or message, when the call returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where an agent of a tree stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// A turn is running.
    Running,
    /// Idle: its last turn finished (its final answer was delivered).
    Completed,
    /// Its last turn was interrupted; it waits for messages or a follow-up task.
    Interrupted,
    /// It failed or crashed; its error was its final answer.
    Failed,
    /// Closed: its thread is shut down.
    Closed,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Running => "running",
            AgentStatus::Completed => "completed",
            AgentStatus::Interrupted => "interrupted",
            AgentStatus::Failed => "failed",
            AgentStatus::Closed => "closed",
        }
    }
}
