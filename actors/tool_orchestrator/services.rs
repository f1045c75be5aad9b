//! What the calls of one turn share: the PTY sessions of `exec_command` and the turn's diff.
//!
//! Created by the TurnActor, which ends its PTY sessions before it reports its own end, and
//! handed to its orchestrator and through it to every call (`ToolContext`); it outlives any
//! one call, and `shutdown` (from the orchestrator's `post_stop`: interrupt, shutdown) kills
//! every session still held, each with its `ExecCommandEnd`.

use super::apply_patch::Plan;
use super::turn_diff::TurnDiffTracker;
use super::unified_exec::sessions::EventSink;
use super::unified_exec::ExecSessions;
use std::path::Path;
use std::sync::Mutex;

/// Per-turn state shared by tool calls.
pub struct TurnServices {
    pub exec: ExecSessions,
    diff: Mutex<TurnDiffTracker>,
}

impl TurnServices {
    /// `events` takes the exec sessions' begin/end events (to the session, as this turn's);
    /// an end carries at most `max_output_bytes` of output.
    pub fn new(events: EventSink, max_output_bytes: usize) -> Self {
        Self {
            exec: ExecSessions::new(events, max_output_bytes),
            diff: Mutex::default(),
        }
    }

    /// Adds an applied patch to the turn's diff and returns the whole diff so far.
    pub fn record_patch(&self, plan: &Plan, root: &Path) -> Option<String> {
        let mut diff = self
            .diff
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        diff.record(plan);
        diff.unified_diff(root)
    }

    /// Kills every PTY session still held (the turn was stopped from outside).
    pub async fn shutdown(&self) {
        self.exec.end_all("the turn was stopped").await;
    }
}
