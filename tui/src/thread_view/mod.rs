//! One thread as the UI sees it: its transcript (finished cells, bounded, and live ones), its
//! status and activity for the threads panel, and its token counts. Pure: events in, state
//! out, so it is tested without a terminal.

use crate::cells::{
    floor_char_boundary, Cell, CommandCell, NoticeKind, OutputTail, PatchCell, STREAM_KEEP_BYTES,
};
use crate::diff;
use std::collections::VecDeque;
use std::time::Instant;
use troupe_messages::agents::CollabCallStatus;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::hooks::HookDecision;
use troupe_messages::usage::TokenUsage;

/// Finished cells kept per thread; older ones are already in the terminal's scrollback.
pub const MAX_CELLS: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadStatus {
    Starting,
    Idle,
    Running,
    WaitingApproval,
    Failed,
    Done,
    /// Its last turn was interrupted.
    Interrupted,
}

impl ThreadStatus {
    pub fn label(self) -> &'static str {
        match self {
            ThreadStatus::Starting => "starting",
            ThreadStatus::Idle => "idle",
            ThreadStatus::Running => "running",
            ThreadStatus::WaitingApproval => "waiting for approval",
            ThreadStatus::Failed => "failed",
            ThreadStatus::Done => "done",
            ThreadStatus::Interrupted => "interrupted",
        }
    }
}

#[derive(Debug)]
pub struct ThreadView {
    /// Finished cells, oldest first; `flushed` of them are in the scrollback already.
    pub cells: VecDeque<Cell>,
    pub flushed: usize,
    /// Cells still changing, in the order they began.
    pub live: Vec<Cell>,
    /// Reasoning streaming right now (shown as the activity).
    reasoning: String,
    pub status: ThreadStatus,
    /// The last command or tool, for the threads panel.
    pub activity: String,
    pub total_usage: TokenUsage,
    /// Prompt tokens of the last request: how full the context window is.
    pub context_tokens: u64,
    pub created: Instant,
    pub turn_started: Option<Instant>,
    turn_usage_start: TokenUsage,
    /// The net diff of the current (or last) turn.
    pub turn_diff: String,
    /// The message that started each turn: (turn number, text), oldest first — what "edit a
    /// previous message" offers (a fork keeps whole turns).
    pub prompts: Vec<(u64, String)>,
    /// Messages typed here that no turn has started with yet.
    unassigned: VecDeque<String>,
    /// The user's own command (`!cmd`) running while no turn does: its call id.
    pub shell_running: Option<String>,
}

impl ThreadView {
    pub fn new(now: Instant) -> Self {
        Self {
            cells: VecDeque::new(),
            flushed: 0,
            live: Vec::new(),
            reasoning: String::new(),
            status: ThreadStatus::Starting,
            activity: String::new(),
            total_usage: TokenUsage::default(),
            context_tokens: 0,
            created: now,
            turn_started: None,
            turn_usage_start: TokenUsage::default(),
            turn_diff: String::new(),
            prompts: Vec::new(),
            unassigned: VecDeque::new(),
            shell_running: None,
        }
    }

    /// Adds a finished cell, dropping the oldest past [`MAX_CELLS`].
    pub fn push(&mut self, cell: Cell) {
        self.cells.push_back(cell);
        if self.cells.len() > MAX_CELLS {
            self.cells.pop_front();
            self.flushed = self.flushed.saturating_sub(1);
        }
    }

    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.push(Cell::Notice {
            kind,
            text: text.into(),
        });
    }

    /// The user typed `text`: pending when a turn is running (it is steered in later).
    pub fn user_message(&mut self, text: String) {
        self.unassigned.push_back(text.clone());
        if self.status == ThreadStatus::Running || self.status == ThreadStatus::WaitingApproval {
            self.live.push(Cell::User {
                text,
                pending: true,
            });
        } else {
            self.push(Cell::User {
                text,
                pending: false,
            });
        }
    }

    /// Moves the live cell at `index` to the finished ones.
    fn finish(&mut self, index: usize) {
        let cell = self.live.remove(index);
        self.push(cell);
    }

    fn finish_all(&mut self, killed: bool) {
        for mut cell in std::mem::take(&mut self.live) {
            match &mut cell {
                Cell::Command(command) if command.exit_code.is_none() && killed => {
                    command.exit_code = Some(None);
                }
                Cell::Assistant { streaming, .. } => *streaming = false,
                Cell::User { pending, .. } => *pending = false,
                _ => {}
            }
            self.push(cell);
        }
    }

    /// The reasoning streaming now, if any (its last line).
    pub fn thinking(&self) -> Option<&str> {
        self.reasoning.lines().last()
    }

    /// Applies one event: each family of events has its own method below.
    pub fn apply(&mut self, msg: &EventMsg, now: Instant) {
        match msg {
            EventMsg::SessionConfigured { .. }
            | EventMsg::TurnStarted { .. }
            | EventMsg::InputInjected { .. }
            | EventMsg::TurnComplete { .. }
            | EventMsg::TurnAborted { .. }
            | EventMsg::ShutdownComplete
            | EventMsg::TokenCount { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::StreamRetry { .. }
            | EventMsg::Warning { .. }
            | EventMsg::Error { .. } => self.on_lifecycle(msg, now),
            EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentMessage { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::AgentReasoning { .. } => self.on_stream(msg),
            EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandOutputDelta { .. }
            | EventMsg::ExecCommandEnd { .. } => self.on_command(msg, now),
            EventMsg::ToolCallBegin { .. }
            | EventMsg::McpToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::McpToolCallEnd { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::PatchApplyEnd { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::PlanUpdated { .. } => self.on_tool(msg),
            EventMsg::ExecApprovalRequest { .. }
            | EventMsg::ApplyPatchApprovalRequest { .. }
            | EventMsg::RequestUserInput { .. }
            | EventMsg::PermissionsGranted { .. }
            | EventMsg::HookStarted { .. }
            | EventMsg::HookCompleted { .. }
            | EventMsg::GoalUpdated { .. }
            | EventMsg::CollabToolCall { .. } => self.on_request_or_agent(msg),
            // Routed by the app to the sub-agent's own view; nothing to show here.
            EventMsg::AgentEvent { .. } | EventMsg::ItemRecorded { .. } => {}
        }
    }

    /// After a replay: whatever a crashed turn left live is finished, and the thread waits
    /// for the runtime's own events.
    pub fn settle(&mut self) {
        self.finish_all(true);
        self.reasoning.clear();
        self.turn_started = None;
        self.status = ThreadStatus::Starting;
    }
}

/// The first 8 characters of an id.
pub fn short_id(id: &str) -> String {
    id.chars().take(8).collect()
}

/// The last 8 characters of an agent's id, after `…`: sub-agents spawned together have
/// UUIDv7 ids whose leading time bits they share, so only the tail tells them apart (the web
/// page shows the same).
pub fn agent_id(id: &str) -> String {
    let skip = id.chars().count().saturating_sub(8);
    format!("…{}", id.chars().skip(skip).collect::<String>())
}

mod commands;
mod lifecycle;
mod requests;
mod stream;
mod tools;

#[cfg(test)]
mod tests;
