//! A thread's sub-agents found from the rollout files alone, without the index: each
//! rollout's first line (its session meta) names its parent and its place in an agent tree,
//! so only those lines are read to find the tree, then the members' rollouts whole.

use super::reconcile::{rollout_files, summarize_file};
use crate::rollout_recorder::loader;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use troupe_messages::ids::ThreadId;
use troupe_messages::threads::ThreadSummary;

/// A sub-agent's rollout on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRollout {
    pub thread_id: ThreadId,
    pub parent: ThreadId,
    pub task_path: String,
    pub depth: u32,
    pub path: PathBuf,
}

/// The rollouts of the agents of `root`'s tree under `home` (children, grandchildren…),
/// parents before their children. Files that cannot be read are left out.
pub fn agent_rollouts(home: &Path, root: ThreadId) -> Vec<AgentRollout> {
    let agents: Vec<AgentRollout> = rollout_files(home)
        .into_iter()
        .filter_map(|path| {
            let meta = loader::read_meta(&path).ok()?;
            let agent = meta.agent?;
            Some(AgentRollout {
                thread_id: meta.thread_id,
                parent: meta.parent_thread_id?,
                task_path: agent.task_path,
                depth: agent.depth,
                path,
            })
        })
        .collect();
    tree_members(agents, root)
}

/// The members of `root`'s tree among `agents`, in breadth-first order.
fn tree_members(mut agents: Vec<AgentRollout>, root: ThreadId) -> Vec<AgentRollout> {
    let mut members: HashSet<ThreadId> = HashSet::from([root]);
    let mut found = Vec::new();
    loop {
        let (next, rest): (Vec<AgentRollout>, Vec<AgentRollout>) = agents
            .into_iter()
            .partition(|a| members.contains(&a.parent) && !members.contains(&a.thread_id));
        agents = rest;
        if next.is_empty() {
            return found;
        }
        members.extend(next.iter().map(|a| a.thread_id));
        found.extend(next);
    }
}

/// The summaries of the agents of `root`'s tree, read from their rollouts; the second part
/// says which could not be read.
pub fn agent_summaries(home: &Path, root: ThreadId) -> (Vec<ThreadSummary>, Vec<String>) {
    let mut summaries = Vec::new();
    let mut unreadable = Vec::new();
    for agent in agent_rollouts(home, root) {
        match summarize_file(home, &agent.path) {
            Ok(summary) => summaries.push(summary),
            Err(err) => unreadable.push(err.to_string()),
        }
    }
    (summaries, unreadable)
}

#[cfg(test)]
#[path = "agents_on_disk_tests.rs"]
mod tests;
