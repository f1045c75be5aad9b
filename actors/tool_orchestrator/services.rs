//! What the calls of one turn share: the PTY sessions of `exec_command` and the turn's diff.
//!
//! Created by the TurnActor, which ends its PTY sessions before it reports its own end, and
//! handed to its orchestrator and through it to every call (`ToolContext`); it outlives any
//! one call, and `shutdown` (from the orchestrator's `post_stop`: interrupt, shutdown) kills
//! every session still held, each with its `ExecCommandEnd`.

use super::turn_diff::TurnDiffTracker;
use super::unified_exec::sessions::KILLED_EXIT_CODE;
use super::unified_exec::ExecSessions;
use crate::hooks::TurnHooks;
use crate::locking::lock;
use crate::turn::outbox::EventSink;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use troupe_apply_patch::Plan;
use troupe_messages::events::EventMsg;
use troupe_messages::tools::ExecOutputSink;

/// A one-shot command in flight, with what it printed so far (kept for its end when the turn
/// is stopped under it: the streamed output is all there is of it then).
struct RunningCommand {
    command: Vec<String>,
    started: Instant,
    printed: String,
}

/// The line an interrupted command's output ends with.
pub const KILLED_BY_STOP: &str = "[process killed: the turn was stopped while it was running]";

/// Per-turn state shared by tool calls.
pub struct TurnServices {
    pub exec: ExecSessions,
    diff: Mutex<TurnDiffTracker>,
    /// One-shot `shell` commands begun and not yet ended, by call id.
    commands: Mutex<HashMap<String, RunningCommand>>,
    /// The turn's lifecycle hooks (PreToolUse, PostToolUse, PermissionRequest).
    pub hooks: Arc<TurnHooks>,
    /// The MCP tools listed when the turn started (empty until then, or without servers).
    mcp_tools: std::sync::OnceLock<Arc<troupe_mcp::McpToolset>>,
    /// The turn's "before" checkpoint, waited for by the first call (then `None`).
    checkpoint_gate: std::sync::OnceLock<
        tokio::sync::Mutex<Option<crate::session::checkpoints::CheckpointGate>>,
    >,
    /// Permissions granted for this turn only (`request_permissions`).
    pub turn_grants: Mutex<troupe_messages::permissions::PermissionGrants>,
}

impl TurnServices {
    /// `events` takes the exec sessions' begin/end events (to the session, as this turn's);
    /// an end carries at most `max_output_bytes` of output.
    pub fn new(events: EventSink, max_output_bytes: usize, hooks: Arc<TurnHooks>) -> Self {
        Self {
            exec: ExecSessions::new(events, max_output_bytes),
            diff: Mutex::default(),
            commands: Mutex::default(),
            hooks,
            mcp_tools: std::sync::OnceLock::new(),
            checkpoint_gate: std::sync::OnceLock::new(),
            turn_grants: Mutex::default(),
        }
    }

    /// The checkpoint every tool call of the turn waits for (set once, at the turn's start).
    pub fn set_checkpoint_gate(&self, gate: crate::session::checkpoints::CheckpointGate) {
        let _ = self
            .checkpoint_gate
            .set(tokio::sync::Mutex::new(Some(gate)));
    }

    /// Waits until the turn's checkpoint is taken; its failure is told once, as a warning
    /// (the tools still run: a missing checkpoint must not stop the user's work).
    pub async fn checkpoint_taken(&self) {
        let Some(slot) = self.checkpoint_gate.get() else {
            return;
        };
        let mut slot = slot.lock().await;
        let Some(mut gate) = slot.take() else {
            return;
        };
        if let Some(why) = crate::session::checkpoints::wait(&mut gate).await {
            self.tell(EventMsg::Warning {
                message: format!("{why}; `troupe rewind` cannot go back to this turn"),
            });
        }
    }

    /// The turn's MCP tools (set once, before the first request).
    pub fn set_mcp_tools(&self, tools: troupe_mcp::McpToolset) {
        let _ = self.mcp_tools.set(Arc::new(tools));
    }

    /// The turn's MCP tools; empty before `set_mcp_tools`.
    pub fn mcp_tools(&self) -> Arc<troupe_mcp::McpToolset> {
        self.mcp_tools.get().cloned().unwrap_or_default()
    }

    /// Tells the session an event of this turn's calls (approval requests, patch events,
    /// plans, warnings, command begin/end): the only route, counted by the turn's outbox.
    pub fn tell(&self, msg: EventMsg) {
        self.exec.tell(msg);
    }

    /// A one-shot command starts: reports its begin the way its end will go (straight to the
    /// session), so an interrupt can still end it in order.
    pub fn begin_command(&self, call_id: &str, command: &[String], cwd: &Path) {
        let mut commands = lock(&self.commands);
        commands.insert(
            call_id.to_string(),
            RunningCommand {
                command: command.to_vec(),
                started: Instant::now(),
                printed: String::new(),
            },
        );
        self.exec.tell(EventMsg::ExecCommandBegin {
            call_id: call_id.to_string(),
            command: command.to_vec(),
            cwd: PathBuf::from(cwd),
            user_shell: false,
        });
    }

    /// The command ended with `end` (an `ExecCommandEnd`); sent unless the turn's stop
    /// already reported it.
    pub fn end_command(&self, call_id: &str, end: EventMsg) {
        let mut commands = lock(&self.commands);
        if commands.remove(call_id).is_some() {
            self.exec.tell(end);
        }
    }

    /// Where a one-shot command's output goes while it runs: `ExecCommandOutputDelta` events
    /// to the session, only while the command is begun and not ended, so no piece follows
    /// its end (a reader still draining, or an interrupt that already ended it).
    pub fn output_sink(self: &Arc<Self>, call_id: &str) -> ExecOutputSink {
        let services = Arc::downgrade(self);
        let call_id = call_id.to_string();
        ExecOutputSink(Arc::new(move |stream, chunk| {
            let Some(services) = services.upgrade() else {
                return;
            };
            let mut commands = lock(&services.commands);
            if let Some(running) = commands.get_mut(&call_id) {
                // Bounded upstream: nothing past the per-command streaming cap comes here.
                running.printed.push_str(&chunk);
                services.exec.tell(EventMsg::ExecCommandOutputDelta {
                    call_id: call_id.clone(),
                    stream,
                    chunk,
                });
            }
        }))
    }

    /// Where a PTY session's output goes while it runs: `ExecCommandOutputDelta` events, only
    /// between its begin and its end (see `ExecSessions::output`).
    pub fn pty_output_sink(self: &Arc<Self>, call_id: &str) -> ExecOutputSink {
        let services = Arc::downgrade(self);
        let call_id = call_id.to_string();
        ExecOutputSink(Arc::new(move |stream, chunk| {
            if let Some(services) = services.upgrade() {
                services.exec.output(&call_id, stream, chunk);
            }
        }))
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

    /// Kills every PTY session still held (the turn was stopped from outside) and ends every
    /// one-shot command still in flight: its process is killed with the sandbox backend, and
    /// its call will not report.
    pub async fn shutdown(&self) {
        self.exec.end_all("the turn was stopped").await;
        let mut commands = lock(&self.commands);
        for (call_id, running) in commands.drain() {
            // What it printed stays (in the cell, the event stream and the rollout), marked.
            let mut output = running.printed;
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(KILLED_BY_STOP);
            self.exec.tell(EventMsg::ExecCommandEnd {
                call_id,
                command: running.command,
                exit_code: Some(KILLED_EXIT_CODE),
                aggregated_output: output,
                duration_ms: running.started.elapsed().as_millis() as u64,
                timed_out: false,
                user_shell: false,
            });
        }
    }
}
