//! Sub-agents (issue #14): the agent tree of a runtime and the collaboration tools.
//!
//! Each sub-agent is a full thread (its own SessionActor under the ThreadManager, rollout and
//! index entry); this module keeps who is whose child ([`tree`]), starts children
//! ([`spawn`]), follows their events ([`watcher`]) and serves the tools ([`tools`]).

pub mod child_settings;
pub mod editor_files;
pub mod git_checkout;
pub mod git_workspace;
#[cfg(test)]
#[path = "notice_tests.rs"]
mod notice_tests;
pub mod paths;
pub mod reattach;
pub mod remote;
pub mod remote_spawn;
pub mod spawn;
pub mod spawn_request;
pub mod specs;
pub mod tools;
pub mod tree;
pub mod watcher;
pub mod worktree;

use crate::tool_orchestrator::contract::ToolHandler;
use ractor::ActorRef;
use specs::CollabTool;
use std::sync::Arc;
use tools::CollabHandler;
use troupe_messages::mailboxes::ThreadManagerMsg;

pub use tree::AgentTree;

/// The collaboration tools, bound to `tree` and the thread manager (which registers them).
pub fn collab_tools(
    tree: &Arc<AgentTree>,
    manager: &ActorRef<ThreadManagerMsg>,
) -> Vec<Arc<dyn ToolHandler>> {
    CollabTool::ALL
        .into_iter()
        .map(|tool| {
            Arc::new(CollabHandler {
                tool,
                tree: tree.clone(),
                manager: manager.clone(),
            }) as Arc<dyn ToolHandler>
        })
        .collect()
}

#[cfg(test)]
#[path = "child_settings_tests.rs"]
mod child_settings_tests;
#[cfg(test)]
#[path = "git_workspace_tests.rs"]
mod git_workspace_tests;
#[cfg(test)]
#[path = "paths_tests.rs"]
mod paths_tests;
#[cfg(test)]
#[path = "reattach_tests.rs"]
mod reattach_tests;
#[cfg(test)]
#[path = "remote_tests.rs"]
mod remote_tests;
#[cfg(test)]
#[path = "worktree_tests.rs"]
mod worktree_tests;
