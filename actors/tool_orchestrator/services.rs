//! What the calls of one turn share: the PTY sessions of `exec_command` and the turn's diff.
//!
//! Owned by the ToolOrchestratorActor (one per turn) and handed to every call through its
//! `ToolContext`; it outlives any one call, and `shutdown` (from the orchestrator's
//! `post_stop`: turn end, interrupt, shutdown) kills every session it holds.

use super::apply_patch::Plan;
use super::turn_diff::TurnDiffTracker;
use super::unified_exec::ExecSessions;
use std::path::Path;
use std::sync::Mutex;

/// Per-turn state shared by tool calls.
#[derive(Default)]
pub struct TurnServices {
    pub exec: ExecSessions,
    diff: Mutex<TurnDiffTracker>,
}

impl TurnServices {
    /// Adds an applied patch to the turn's diff and returns the whole diff so far.
    pub fn record_patch(&self, plan: &Plan, root: &Path) -> Option<String> {
        let mut diff = self
            .diff
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        diff.record(plan);
        diff.unified_diff(root)
    }

    /// Kills every live PTY session; called once when the turn ends.
    pub async fn shutdown(&self) {
        self.exec.kill_all().await;
    }
}
