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

    #[allow(
        clippy::too_many_lines,
        reason = "one arm per event variant, each a few lines of cell update"
    )]
    pub fn apply(&mut self, msg: &EventMsg, now: Instant) {
        match msg {
            EventMsg::SessionConfigured {
                thread_id,
                model,
                cwd,
                ..
            } => {
                self.status = ThreadStatus::Idle;
                self.notice(
                    NoticeKind::Info,
                    format!("thread {thread_id} · {model} · {}", cwd.display()),
                );
            }
            EventMsg::TurnStarted { turn_id } => {
                // The oldest message typed here and not yet seen is the one this turn began
                // with; any others were steered into an earlier turn or join this one.
                if let Some(text) = self.unassigned.pop_front() {
                    self.prompts.push((turn_id.0, text));
                }
                self.unassigned.clear();
                self.status = ThreadStatus::Running;
                self.turn_started = Some(now);
                self.turn_usage_start = self.total_usage;
                self.turn_diff.clear();
                // Input queued after the last turn ended starts this one.
                self.finish_pending_inputs(None);
            }
            EventMsg::InputInjected { text, .. } => {
                // A sub-agent's report entering this thread's history: not something typed.
                if let Some(report) = troupe_actors::agents::notice::parse_report(text) {
                    self.notice(NoticeKind::Info, report.headline());
                    return;
                }
                // Steered into a running turn: it started none.
                if let Some(at) = self.unassigned.iter().position(|t| t.trim() == text.trim()) {
                    self.unassigned.remove(at);
                }
                self.finish_pending_inputs(Some(text))
            }
            EventMsg::AgentMessageDelta { delta } => {
                self.reasoning.clear();
                match self.live.iter_mut().find_map(|c| match c {
                    Cell::Assistant {
                        markdown,
                        streaming: true,
                    } => Some(markdown),
                    _ => None,
                }) {
                    Some(markdown) => append_bounded(markdown, delta),
                    None => self.live.push(Cell::Assistant {
                        markdown: delta.clone(),
                        streaming: true,
                    }),
                }
            }
            EventMsg::AgentMessage { message } => {
                self.live.retain(|c| !matches!(c, Cell::Assistant { .. }));
                self.push(Cell::Assistant {
                    markdown: message.clone(),
                    streaming: false,
                });
            }
            EventMsg::AgentReasoningDelta { delta } => append_bounded(&mut self.reasoning, delta),
            EventMsg::AgentReasoning { text } => {
                self.reasoning.clear();
                self.push(Cell::Reasoning {
                    text: text.clone(),
                    expanded: false,
                });
            }
            EventMsg::ExecCommandBegin {
                call_id,
                command,
                user_shell,
                ..
            } => {
                let cell = command_cell(call_id, command, *user_shell);
                if *user_shell {
                    self.activity = format!("! {}", cell.command);
                    // Not a turn, but the thread is busy: Esc stops it, the timer runs.
                    if self.status == ThreadStatus::Idle {
                        self.status = ThreadStatus::Running;
                        self.turn_started = Some(now);
                        self.shell_running = Some(call_id.clone());
                    }
                } else {
                    self.activity = format!("$ {}", cell.command);
                }
                self.live.push(Cell::Command(cell));
            }
            EventMsg::ExecCommandEnd {
                call_id,
                command,
                exit_code,
                aggregated_output,
                duration_ms,
                timed_out,
                user_shell,
            } => {
                let index = self
                    .live
                    .iter()
                    .position(|c| matches!(c, Cell::Command(cmd) if &cmd.call_id == call_id));
                let index = match index {
                    Some(index) => index,
                    None => {
                        self.live
                            .push(Cell::Command(command_cell(call_id, command, *user_shell)));
                        self.live.len() - 1
                    }
                };
                if let Cell::Command(cell) = &mut self.live[index] {
                    // The final output is authoritative: streaming stops at a per-command cap,
                    // the end carries the output's real head and tail.
                    cell.output = OutputTail::default();
                    cell.output.push(aggregated_output);
                    cell.exit_code = Some(*exit_code);
                    cell.duration_ms = *duration_ms;
                    cell.timed_out = *timed_out;
                }
                self.finish(index);
                if self.shell_running.as_ref() == Some(call_id) {
                    self.shell_running = None;
                    self.turn_started = None;
                    if self.status == ThreadStatus::Running {
                        self.status = ThreadStatus::Idle;
                    }
                }
            }
            EventMsg::HookStarted {
                event_name,
                command,
                ..
            } => {
                self.activity = format!("hook {} · {command}", event_name.as_str());
            }
            // A hook that changed the flow (or failed) is worth a line; a silent one is not.
            EventMsg::HookCompleted {
                event_name,
                command,
                duration_ms,
                decision,
                message,
                ..
            } => {
                let kind = match decision {
                    HookDecision::None => None,
                    HookDecision::Allow => Some(NoticeKind::Info),
                    HookDecision::Block | HookDecision::Deny => Some(NoticeKind::Warning),
                    HookDecision::Failed => Some(NoticeKind::Error),
                };
                if let Some(kind) = kind {
                    let reason = message.as_deref().unwrap_or("");
                    self.notice(
                        kind,
                        format!(
                            "hook {} {} ({duration_ms} ms): {command} {reason}",
                            event_name.as_str(),
                            decision.as_str()
                        ),
                    );
                }
            }
            EventMsg::PermissionsGranted {
                scope, permissions, ..
            } => self.notice(
                NoticeKind::Info,
                format!(
                    "permissions granted for the {}: {}",
                    scope.as_str(),
                    permissions.summary()
                ),
            ),
            EventMsg::ExecCommandOutputDelta { call_id, chunk, .. } => {
                let cell = self.live.iter_mut().find_map(|c| match c {
                    Cell::Command(cmd) if &cmd.call_id == call_id => Some(cmd),
                    _ => None,
                });
                if let Some(cell) = cell {
                    cell.output.push(chunk);
                }
            }
            EventMsg::ExecApprovalRequest { command, .. } => {
                self.status = ThreadStatus::WaitingApproval;
                self.activity = format!("approve? $ {}", crate::command_line(command));
            }
            EventMsg::ApplyPatchApprovalRequest { files, .. } => {
                self.status = ThreadStatus::WaitingApproval;
                self.activity = format!("approve? patch to {} file(s)", files.len());
            }
            EventMsg::RequestUserInput { questions, .. } => {
                self.activity = format!("answer? {} question(s)", questions.len());
            }
            EventMsg::GoalUpdated { goal, continuing } => {
                let next = if *continuing { ", continuing" } else { "" };
                self.notice(
                    NoticeKind::Info,
                    format!(
                        "goal {}: {} ({} tokens used{next})",
                        goal.status.as_str(),
                        goal.objective,
                        goal.tokens_used
                    ),
                );
            }
            EventMsg::ToolCallBegin { tool_name, .. }
            | EventMsg::McpToolCallBegin { tool_name, .. } => {
                self.activity = tool_name.clone();
                self.live.push(Cell::Tool {
                    name: tool_name.clone(),
                    success: None,
                    output: String::new(),
                });
            }
            EventMsg::ToolCallEnd {
                tool_name,
                success,
                output,
                ..
            }
            | EventMsg::McpToolCallEnd {
                tool_name,
                success,
                output,
                ..
            } => {
                let index = self.live.iter().position(
                    |c| matches!(c, Cell::Tool { name, success: None, .. } if name == tool_name),
                );
                let cell = Cell::Tool {
                    name: tool_name.clone(),
                    success: Some(*success),
                    output: output.clone(),
                };
                match index {
                    Some(index) => {
                        self.live[index] = cell;
                        self.finish(index);
                    }
                    None => self.push(cell),
                }
            }
            EventMsg::PatchApplyBegin { call_id, changes } => {
                self.activity = "apply_patch".into();
                let files = changes
                    .iter()
                    .map(|c| (c.path.display().to_string(), c.kind))
                    .collect();
                self.live.push(Cell::Patch(PatchCell {
                    call_id: call_id.clone(),
                    files,
                    success: None,
                    output: String::new(),
                    diffs: Vec::new(),
                }));
            }
            EventMsg::PatchApplyEnd {
                call_id,
                changes,
                success,
                output,
            } => {
                let index = self
                    .live
                    .iter()
                    .position(|c| matches!(c, Cell::Patch(p) if &p.call_id == call_id));
                let files = changes
                    .iter()
                    .map(|c| (c.path.display().to_string(), c.kind))
                    .collect();
                let cell = PatchCell {
                    call_id: call_id.clone(),
                    files,
                    success: Some(*success),
                    output: output.clone(),
                    diffs: Vec::new(),
                };
                match index {
                    // A written patch waits in the viewport for the turn diff that follows it.
                    Some(index) if *success => self.live[index] = Cell::Patch(cell),
                    Some(index) => {
                        self.live[index] = Cell::Patch(cell);
                        self.finish(index);
                    }
                    None => self.push(Cell::Patch(cell)),
                }
            }
            EventMsg::TurnDiff { unified_diff } => {
                self.turn_diff = unified_diff.clone();
                let files = diff::split_files(unified_diff);
                while let Some(index) = self
                    .live
                    .iter()
                    .position(|c| matches!(c, Cell::Patch(p) if p.success == Some(true)))
                {
                    if let Cell::Patch(patch) = &mut self.live[index] {
                        patch.diffs = files
                            .iter()
                            .filter(|f| patch.files.iter().any(|(p, _)| diff::names(f, p)))
                            .cloned()
                            .collect();
                    }
                    self.finish(index);
                }
            }
            EventMsg::PlanUpdated { explanation, plan } => self.push(Cell::Plan {
                explanation: explanation.clone(),
                items: plan.clone(),
            }),
            EventMsg::ContextCompacted {
                tokens_before,
                tokens_after,
                ..
            } => {
                self.notice(
                    NoticeKind::Info,
                    format!("context compacted: ~{tokens_before} → ~{tokens_after} tokens"),
                );
            }
            EventMsg::TokenCount { last, total } => {
                self.total_usage = *total;
                self.context_tokens = last.input_tokens + last.output_tokens;
            }
            EventMsg::StreamRetry {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => self.notice(
                NoticeKind::Warning,
                format!(
                    "model request failed ({reason}); retry {attempt}/{max_attempts} in {}",
                    crate::cells::format_duration(*delay_ms)
                ),
            ),
            EventMsg::Warning { message } => self.notice(NoticeKind::Warning, message.clone()),
            EventMsg::Error { error, .. } => self.notice(NoticeKind::Error, error.to_string()),
            EventMsg::TurnComplete { .. } => {
                self.end_turn("turn complete", ThreadStatus::Idle, now, false)
            }
            EventMsg::TurnAborted { reason, .. } => {
                let (outcome, status) = match reason {
                    AbortReason::Interrupted => ("interrupted", ThreadStatus::Interrupted),
                    AbortReason::Failed => ("turn failed", ThreadStatus::Failed),
                    AbortReason::Shutdown => ("stopped", ThreadStatus::Done),
                };
                self.end_turn(outcome, status, now, true);
            }
            EventMsg::CollabToolCall {
                call_id,
                tool,
                receiver_thread_ids,
                prompt,
                status,
                ..
            } => {
                self.activity = tool.clone();
                let targets = receiver_thread_ids
                    .iter()
                    .map(|id| agent_id(&id.to_string()))
                    .collect();
                let cell = Cell::Agent {
                    tool: tool.clone(),
                    targets,
                    prompt: prompt.clone(),
                    status: *status,
                };
                let index = self.live.iter().position(|c| matches!(c, Cell::Agent { tool: t, status: CollabCallStatus::InProgress, .. } if t == tool));
                let _ = call_id;
                match (index, status) {
                    (Some(index), CollabCallStatus::InProgress) => self.live[index] = cell,
                    (None, CollabCallStatus::InProgress) => self.live.push(cell),
                    (Some(index), _) => {
                        self.live[index] = cell;
                        self.finish(index);
                    }
                    (None, _) => self.push(cell),
                }
            }
            EventMsg::ShutdownComplete => {
                self.finish_all(true);
                self.status = ThreadStatus::Done;
            }
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

    /// Pending user cells become plain ones: all of them, or the first whose text matches.
    fn finish_pending_inputs(&mut self, text: Option<&String>) {
        while let Some(index) = self.live.iter().position(|c| match c {
            Cell::User {
                pending: true,
                text: t,
            } => text.is_none_or(|wanted| wanted.trim() == t.trim()),
            _ => false,
        }) {
            if let Cell::User { pending, .. } = &mut self.live[index] {
                *pending = false;
            }
            self.finish(index);
            if text.is_some() {
                return;
            }
        }
        if let Some(text) = text {
            // Injected text we did not type here (another client): shown as it was sent.
            self.push(Cell::User {
                text: text.clone(),
                pending: false,
            });
        }
    }

    fn end_turn(&mut self, outcome: &str, status: ThreadStatus, now: Instant, killed: bool) {
        // Pending input outlives an interrupted turn: it starts the next one.
        let pending: Vec<Cell> = self
            .live
            .iter()
            .filter(|c| matches!(c, Cell::User { pending: true, .. }))
            .cloned()
            .collect();
        self.live
            .retain(|c| !matches!(c, Cell::User { pending: true, .. }));
        self.finish_all(killed);
        self.reasoning.clear();
        let elapsed_ms = self
            .turn_started
            .take()
            .map_or(0, |t| now.duration_since(t).as_millis() as u64);
        let mut usage = self.total_usage;
        usage.input_tokens = usage
            .input_tokens
            .saturating_sub(self.turn_usage_start.input_tokens);
        usage.output_tokens = usage
            .output_tokens
            .saturating_sub(self.turn_usage_start.output_tokens);
        usage.total_tokens = usage
            .total_tokens
            .saturating_sub(self.turn_usage_start.total_tokens);
        self.push(Cell::TurnFooter {
            outcome: outcome.into(),
            usage,
            elapsed_ms,
        });
        self.status = status;
        self.live.extend(pending);
    }
}

/// Appends a streamed piece, keeping the last [`STREAM_KEEP_BYTES`] (a model that streams
/// forever costs a bounded buffer; the finished message replaces it anyway).
fn append_bounded(buffer: &mut String, delta: &str) {
    buffer.push_str(delta);
    if buffer.len() > STREAM_KEEP_BYTES {
        let cut = floor_char_boundary(buffer, buffer.len() - STREAM_KEEP_BYTES);
        let cut = (cut..=buffer.len())
            .find(|i| buffer.is_char_boundary(*i))
            .unwrap_or(buffer.len());
        buffer.drain(..cut);
    }
}

/// The cell of a command that begins (or ends unseen): the user's own shows what they typed
/// (the last word of `shell -c COMMAND`), the model's its whole argv.
fn command_cell(call_id: &str, argv: &[String], user_shell: bool) -> CommandCell {
    match (user_shell, argv) {
        (true, [_, flag, typed]) if flag == "-c" => {
            CommandCell::user_shell(call_id.to_string(), typed.clone())
        }
        (true, _) => CommandCell::user_shell(call_id.to_string(), crate::command_line(argv)),
        (false, _) => CommandCell::new(call_id.to_string(), crate::command_line(argv)),
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

#[cfg(test)]
#[path = "thread_view_tests.rs"]
mod tests;
