//! The UI's state and what keys and runtime events do to it. Pure: it returns [`Action`]s
//! for the runner to carry out against the runtime, so every key path is unit-tested.

use crate::cells::{Cell, NoticeKind};
use crate::composer::{Composer, ComposerOutcome};
use crate::slash::{self, SlashCommand};
use crate::thread_view::{ThreadStatus, ThreadView};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::ThreadId;
use troupe_messages::items::ResponseItem;
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::permissions::SandboxRetry;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::threads::ThreadSummary;

/// What the runner must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Submit an op to the thread opened as client `client`.
    Submit {
        client: usize,
        op: Op,
    },
    NewThread,
    /// Fetch the provider's model list for `/model` (the picker, or checking a name).
    ListModels {
        client: usize,
        request: model::ModelRequest,
    },
    /// Switch root `client` to `model` with this reasoning effort (the `/model` picker).
    SetModel {
        client: usize,
        model: String,
        effort: Option<String>,
    },
    /// List recorded threads for the /resume picker.
    ListThreads,
    Resume(PathBuf),
    Fork(ThreadId),
    /// Write an AGENTS.md skeleton in the working directory.
    InitAgentsMd,
    /// Compute the work tree's diff for `/diff` (the turn changed nothing).
    WorkTreeDiff,
    /// Check a `/review` target, then start the review turn on `client`.
    Review {
        client: usize,
        target: troupe_actors::review::ReviewTarget,
    },
    Quit,
    /// Append a message sent to thread `session_id` to the prompt history.
    RecordHistory {
        session_id: String,
        text: String,
    },
    /// `/rewind`: list the turns of root `client`'s thread `thread` for the picker.
    RewindTurns {
        client: usize,
        thread: ThreadId,
    },
    /// `/rewind`: what rewinding `thread` to before `turn` would change (nothing written).
    RewindPreview {
        thread: ThreadId,
        turn: u64,
        mode: rewind::RewindMode,
    },
    /// `/rewind` confirmed: close root `client`, rewind its thread to before `turn`, open it
    /// again (with `prompt` in the composer when the conversation went back).
    Rewind {
        client: usize,
        thread: ThreadId,
        turn: u64,
        mode: rewind::RewindMode,
        force: bool,
        prompt: String,
    },
    /// "Edit a previous message": a fork of `thread` holding the turns before `turn`, opened
    /// with `text` in the composer.
    EditFrom {
        thread: ThreadId,
        turn: u64,
        text: String,
    },
}

/// Settings shown in the status line.
#[derive(Debug, Clone)]
pub struct StatusInfo {
    pub model: String,
    pub effort: Option<String>,
    pub approval: AskForApproval,
    pub sandbox: SandboxMode,
    pub cwd: PathBuf,
    pub branch: Option<String>,
    pub context_window: Option<u64>,
    /// Plan mode (`/plan`): the thread investigates read-only and proposes a plan.
    pub plan_mode: bool,
}

/// One thread of this process: a root opened here, or a sub-agent of one.
#[derive(Debug)]
pub struct ThreadEntry {
    pub id: Option<ThreadId>,
    /// Task path (`/root/explore`) of a sub-agent; a label for a root.
    pub path: String,
    pub depth: usize,
    /// The client of its root (sub-agents are reached through it).
    pub client: usize,
    pub is_agent: bool,
    pub rollout: Option<PathBuf>,
    pub view: ThreadView,
    /// Messages typed before the thread's id was known, for the prompt history.
    pub unrecorded: Vec<String>,
    /// A fresh root still under its placeholder label: its first message names it.
    pub untitled: bool,
    /// Messages queued with Tab during a turn, sent one per turn once it completes.
    pub queued: VecDeque<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalSubject {
    Command { command: String, cwd: PathBuf },
    Patch { files: Vec<PathBuf> },
}

/// An approval request waiting for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    pub thread: usize,
    pub call_id: String,
    pub subject: ApprovalSubject,
    pub reason: Option<String>,
    /// A command the sandbox refused, asked about again: what approving adds.
    pub sandbox_retry: Option<SandboxRetry>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    Threads {
        selected: usize,
    },
    Picker {
        items: Vec<ThreadSummary>,
        selected: usize,
        filter: String,
    },
    /// A diff, scrollable: the turn's, or the work tree's when the turn changed nothing.
    Diff {
        scroll: u16,
        title: String,
        text: String,
    },
    /// Ctrl+O: the whole transcript, full screen (drawn on the alternate screen).
    Transcript(Box<crate::transcript::Transcript>),
    /// `/model`: the provider's models and a reasoning effort.
    Models(model::ModelPicker),
    /// "Edit a previous message": the current thread's turn-starting messages.
    Backtrack {
        selected: usize,
    },
    /// `/rewind`: a turn, what to take back, the preview.
    Rewind(Box<rewind::RewindPicker>),
}

pub struct App {
    pub threads: Vec<ThreadEntry>,
    pub current: usize,
    pub composer: Composer,
    pub approvals: VecDeque<PendingApproval>,
    /// `request_user_input` calls waiting for the person (`questions.rs`), oldest first.
    pub questions: VecDeque<crate::questions::PendingQuestions>,
    pub overlay: Overlay,
    pub status: StatusInfo,
    pub slash_selected: usize,
    /// Cells to write into the scrollback before the current thread's (headers, help).
    outbox: Vec<Cell>,
    pub quitting: bool,
    /// Reasoning cells are written expanded (`/reasoning`); collapsed to one line otherwise.
    pub show_reasoning: bool,
    /// Esc was pressed on an empty composer: another opens "edit a previous message".
    pub esc_primed: bool,
    /// The selected row of the `@` / `$` completion popup.
    pub completion_selected: usize,
    /// Files of the working directory for `@` (filled once listed).
    pub files: Vec<String>,
    /// Skills for `$`.
    pub skills: Vec<crate::completion::SkillEntry>,
    /// The next /resume picker lists sub-agents' threads too (`/resume all`).
    pub picker_shows_agents: bool,
    /// `d` in the approval overlay: the message being typed to deny with.
    pub deny_message: Option<String>,
    /// `o` in the approval overlay: the asking thread is shown, the approval waits.
    pub approval_peek: Option<approvals::ApprovalPeek>,
    /// Roots (by client) whose running turn is a `/review`.
    reviewing: Vec<usize>,
}

impl App {
    pub fn new(status: StatusInfo) -> Self {
        Self {
            threads: Vec::new(),
            current: 0,
            composer: Composer::default(),
            approvals: VecDeque::new(),
            questions: VecDeque::new(),
            overlay: Overlay::None,
            status,
            slash_selected: 0,
            outbox: Vec::new(),
            quitting: false,
            show_reasoning: false,
            esc_primed: false,
            completion_selected: 0,
            files: Vec::new(),
            skills: Vec::new(),
            picker_shows_agents: false,
            deny_message: None,
            approval_peek: None,
            reviewing: Vec::new(),
        }
    }

    /// A root thread opened as client `client`; it becomes the current one.
    pub fn add_root(&mut self, client: usize, label: String, now: Instant) -> usize {
        self.add_root_with(client, label, ThreadView::new(now))
    }

    /// As [`App::add_root`], with a transcript already there (replayed from its rollout).
    pub fn add_root_with(&mut self, client: usize, label: String, view: ThreadView) -> usize {
        self.threads.push(ThreadEntry {
            id: None,
            path: label,
            depth: 0,
            client,
            is_agent: false,
            rollout: None,
            view,
            unrecorded: Vec::new(),
            untitled: false,
            queued: VecDeque::new(),
        });
        let index = self.threads.len() - 1;
        self.switch_to(index);
        index
    }

    pub fn current_view(&self) -> &ThreadView {
        &self.threads[self.current].view
    }

    /// The cells to write into the scrollback now, in order.
    pub fn take_scrollback(&mut self) -> Vec<Cell> {
        let mut cells = std::mem::take(&mut self.outbox);
        let show_reasoning = self.show_reasoning;
        if let Some(entry) = self.threads.get_mut(self.current) {
            let view = &mut entry.view;
            cells.extend(view.cells.iter().skip(view.flushed).map(|cell| match cell {
                Cell::Reasoning { text, .. } => Cell::Reasoning {
                    text: text.clone(),
                    expanded: show_reasoning,
                },
                cell => cell.clone(),
            }));
            view.flushed = view.cells.len();
        }
        cells
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.outbox.push(Cell::Notice {
            kind: NoticeKind::Info,
            text: text.into(),
        });
    }

    pub fn switch_to(&mut self, index: usize) {
        if index >= self.threads.len() {
            return;
        }
        self.current = index;
        let entry = &mut self.threads[index];
        // The thread's recent history follows a header; older cells were shown before.
        entry.view.flushed = entry
            .view
            .cells
            .len()
            .saturating_sub(crate::replay::REPLAY_CELLS);
        let hidden = match entry.view.flushed {
            0 => String::new(),
            n => format!(" {n} earlier cells not shown ──"),
        };
        let label = match entry.id {
            Some(id) => format!(
                "── {} ({}) ──",
                entry.path,
                if entry.is_agent {
                    crate::thread_view::agent_id(&id.to_string())
                } else {
                    crate::thread_view::short_id(&id.to_string())
                }
            ),
            None => format!("── {} ──", entry.path),
        };
        self.outbox.push(Cell::Notice {
            kind: NoticeKind::Info,
            text: format!("{label}{hidden}"),
        });
    }

    /// A message sent to thread `index` goes to the prompt history (once its id is known).
    pub fn remember_prompt(&mut self, index: usize, text: String) -> Vec<Action> {
        let entry = &mut self.threads[index];
        match entry.id {
            Some(id) => vec![Action::RecordHistory {
                session_id: id.to_string(),
                text,
            }],
            None => {
                entry.unrecorded.push(text);
                Vec::new()
            }
        }
    }

    /// The /resume picker's choices arrived.
    pub fn open_picker(&mut self, mut items: Vec<ThreadSummary>) {
        // Threads open here already are a Ctrl+T away (and cannot be opened twice).
        items.retain(|t| !self.threads.iter().any(|open| open.id == Some(t.id)));
        // A sub-agent's thread is part of its root's: listed only when asked for.
        if !std::mem::take(&mut self.picker_shows_agents) {
            items.retain(|t| t.task_path.is_none());
        }
        if items.is_empty() {
            self.info("no recorded thread to resume");
        } else {
            self.overlay = Overlay::Picker {
                items,
                selected: 0,
                filter: String::new(),
            };
        }
    }

    pub fn is_running(&self, index: usize) -> bool {
        matches!(
            self.threads[index].view.status,
            ThreadStatus::Running | ThreadStatus::WaitingApproval
        )
    }

    fn interrupt(&mut self) -> Vec<Action> {
        let entry = &self.threads[self.current];
        if entry.is_agent {
            self.info(
                "a sub-agent is stopped through its parent: switch to the main thread to interrupt",
            );
            return Vec::new();
        }
        vec![Action::Submit {
            client: entry.client,
            op: Op::Interrupt,
        }]
    }

    fn quit(&mut self) -> Vec<Action> {
        self.quitting = true;
        vec![Action::Quit]
    }
}

fn override_op(
    model: Option<String>,
    approval_policy: Option<AskForApproval>,
    sandbox_mode: Option<SandboxMode>,
) -> Op {
    Op::OverrideTurnContext {
        model,
        approval_policy,
        sandbox_mode,
        cwd: None,
        collaboration_mode: None,
    }
}

pub mod approvals;
mod commands;
mod events;
mod keys;
pub mod model;
mod overlays;
mod queue;
mod review;
pub mod rewind;
mod shell;
mod slash_commands;
pub use queue::thread_title;
pub use review::parse_target as review_target;

#[cfg(test)]
mod tests;
