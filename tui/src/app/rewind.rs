//! More of [`App`]: `/rewind`. A picker of the thread's turns (newest first), then what to
//! take back (code, conversation or both), then what the rewind would change (each file's
//! diff, the files someone else changed), Enter to rewind, Esc back a step. The rewind
//! itself is the thread store's (`troupe_actors::thread_store::rewind`): the runner closes
//! the thread, rewinds it, and opens it again with its history as it now is.

use super::{Action, App, Overlay};
use crossterm::event::{KeyCode, KeyEvent};
use troupe_actors::thread_store::rewind_preview::{RewindPreview, TurnRow};
use troupe_messages::ids::ThreadId;

/// What a rewind takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindMode {
    Both,
    Code,
    Conversation,
}

impl RewindMode {
    /// In the order the picker offers them.
    pub const ALL: [RewindMode; 3] = [RewindMode::Both, RewindMode::Code, RewindMode::Conversation];

    pub fn label(self) -> &'static str {
        match self {
            RewindMode::Both => "code and conversation",
            RewindMode::Code => "code only (the files; the conversation stays)",
            RewindMode::Conversation => "conversation only (the files stay)",
        }
    }

    pub fn code(self) -> bool {
        matches!(self, RewindMode::Both | RewindMode::Code)
    }

    pub fn conversation(self) -> bool {
        matches!(self, RewindMode::Both | RewindMode::Conversation)
    }
}

/// The `/rewind` overlay.
#[derive(Debug, Clone, PartialEq)]
pub struct RewindPicker {
    /// The root thread rewound, as its client and id.
    pub client: usize,
    pub thread: ThreadId,
    /// Newest first.
    pub turns: Vec<TurnRow>,
    pub selected: usize,
    pub stage: RewindStage,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RewindStage {
    Turns,
    Mode {
        selected: usize,
    },
    /// The preview is being worked out.
    Loading {
        mode: RewindMode,
    },
    Preview {
        mode: RewindMode,
        preview: Box<PreviewShown>,
        scroll: u16,
    },
}

/// A preview as the overlay draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewShown {
    /// What the rewind does, one line each (the summary above the diffs).
    pub summary: Vec<String>,
    /// Files changed since the last turn by something other than the agent.
    pub conflicts: Vec<String>,
    /// The files' diffs, `git diff` style.
    pub diff: String,
}

impl RewindPicker {
    pub fn turn(&self) -> Option<&TurnRow> {
        self.turns.get(self.selected)
    }
}

impl App {
    /// `/rewind`: asks for the current thread's turns.
    pub(super) fn rewind(&mut self) -> Vec<Action> {
        let entry = &self.threads[self.current];
        if entry.is_agent {
            self.info("/rewind works on a main thread: switch to it (Ctrl+T) first");
            return Vec::new();
        }
        if self.is_running(self.current) {
            self.info("a turn is running: /rewind once it has ended (Esc stops it)");
            return Vec::new();
        }
        let Some(thread) = entry.id else {
            self.info("this thread has no turns to rewind yet");
            return Vec::new();
        };
        vec![Action::RewindTurns {
            client: entry.client,
            thread,
        }]
    }

    /// The thread's turns arrived (`Action::RewindTurns`).
    pub fn open_rewind(
        &mut self,
        client: usize,
        thread: ThreadId,
        turns: Result<Vec<TurnRow>, String>,
    ) {
        match turns {
            Ok(turns) if turns.is_empty() => self.info("this thread has no turns to rewind yet"),
            Ok(turns) => {
                self.overlay = Overlay::Rewind(Box::new(RewindPicker {
                    client,
                    thread,
                    turns,
                    selected: 0,
                    stage: RewindStage::Turns,
                }))
            }
            Err(err) => self.info(format!("cannot rewind: {err}")),
        }
    }

    /// The preview arrived (`Action::RewindPreview`); dropped when the overlay moved on.
    pub fn show_rewind_preview(&mut self, preview: Result<RewindPreview, String>) {
        let Overlay::Rewind(picker) = &mut self.overlay else {
            return;
        };
        let RewindStage::Loading { mode } = picker.stage else {
            return;
        };
        match preview {
            Ok(preview) => {
                let turn = picker.turn().map_or(0, |t| t.turn);
                picker.stage = RewindStage::Preview {
                    mode,
                    preview: Box::new(shown(&preview, turn, mode)),
                    scroll: 0,
                };
            }
            Err(err) => {
                picker.stage = RewindStage::Mode {
                    selected: RewindMode::ALL.iter().position(|m| *m == mode).unwrap_or(0),
                };
                self.info(format!("cannot rewind: {err}"));
            }
        }
    }

    pub(super) fn rewind_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Overlay::Rewind(picker) = &mut self.overlay else {
            return Vec::new();
        };
        match &mut picker.stage {
            RewindStage::Turns => match key.code {
                KeyCode::Up => picker.selected = picker.selected.saturating_sub(1),
                KeyCode::Down => {
                    picker.selected = (picker.selected + 1).min(picker.turns.len() - 1)
                }
                KeyCode::Enter => picker.stage = RewindStage::Mode { selected: 0 },
                KeyCode::Esc | KeyCode::Char('q') => self.overlay = Overlay::None,
                _ => {}
            },
            RewindStage::Mode { selected } => match key.code {
                KeyCode::Up => *selected = selected.saturating_sub(1),
                KeyCode::Down => *selected = (*selected + 1).min(RewindMode::ALL.len() - 1),
                KeyCode::Enter => {
                    let mode = RewindMode::ALL[*selected];
                    picker.stage = RewindStage::Loading { mode };
                    let turn = picker.turn().map_or(0, |t| t.turn);
                    return vec![Action::RewindPreview {
                        thread: picker.thread,
                        turn,
                        mode,
                    }];
                }
                KeyCode::Esc => picker.stage = RewindStage::Turns,
                _ => {}
            },
            RewindStage::Loading { .. } => {
                if key.code == KeyCode::Esc {
                    picker.stage = RewindStage::Mode { selected: 0 };
                }
            }
            RewindStage::Preview {
                mode,
                preview,
                scroll,
            } => match key.code {
                KeyCode::Up => *scroll = scroll.saturating_sub(1),
                KeyCode::Down => *scroll = scroll.saturating_add(1),
                KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                KeyCode::PageDown | KeyCode::Char(' ') => *scroll = scroll.saturating_add(10),
                KeyCode::Esc => {
                    let selected = RewindMode::ALL.iter().position(|m| m == mode).unwrap_or(0);
                    picker.stage = RewindStage::Mode { selected };
                }
                KeyCode::Enter if !preview.conflicts.is_empty() => {
                    self.info("files changed since the last turn by something other than the agent would be lost: press f to rewind anyway, Esc to go back");
                }
                KeyCode::Enter => return self.confirm_rewind(false),
                KeyCode::Char('f') => return self.confirm_rewind(true),
                _ => {}
            },
        }
        Vec::new()
    }

    fn confirm_rewind(&mut self, force: bool) -> Vec<Action> {
        let Overlay::Rewind(picker) = std::mem::replace(&mut self.overlay, Overlay::None) else {
            return Vec::new();
        };
        let (RewindStage::Preview { mode, .. }, Some(turn)) = (&picker.stage, picker.turn()) else {
            return Vec::new();
        };
        vec![Action::Rewind {
            client: picker.client,
            thread: picker.thread,
            turn: turn.turn,
            mode: *mode,
            force,
            prompt: turn.prompt.clone(),
        }]
    }

    /// The runner opened the rewound thread again as client `client`: it replaces the entry
    /// of the old one (its sub-agents' entries go: their sessions ended with it). After a
    /// conversation rewind the rewound turn's prompt is back in the composer.
    pub fn rewound(
        &mut self,
        old_client: usize,
        client: usize,
        view: crate::thread_view::ThreadView,
        summary: String,
        prompt: Option<String>,
    ) {
        let kept: Vec<bool> = self
            .threads
            .iter()
            .map(|t| !(t.is_agent && t.client == old_client))
            .collect();
        let moved = |old: usize| {
            kept.get(old)
                .copied()
                .unwrap_or(false)
                .then(|| kept[..old].iter().filter(|k| **k).count())
        };
        self.approvals.retain_mut(|a| match moved(a.thread) {
            Some(new) => {
                a.thread = new;
                true
            }
            None => false,
        });
        self.questions.retain_mut(|q| match moved(q.thread) {
            Some(new) => {
                q.thread = new;
                true
            }
            None => false,
        });
        self.approval_peek = self.approval_peek.take().and_then(|mut peek| {
            moved(peek.back_to).map(|new| {
                peek.back_to = new;
                peek
            })
        });
        let mut position = 0;
        self.threads.retain(|_| {
            position += 1;
            kept[position - 1]
        });
        let Some(index) = self
            .threads
            .iter()
            .position(|t| t.client == old_client && !t.is_agent)
        else {
            return;
        };
        let entry = &mut self.threads[index];
        entry.client = client;
        entry.view = view;
        self.switch_to(index);
        self.info(summary);
        if let Some(prompt) = prompt {
            self.composer.set_text(&prompt);
        }
    }
}

/// The preview's lines.
fn shown(preview: &RewindPreview, turn: u64, mode: RewindMode) -> PreviewShown {
    let mut summary = vec![format!("rewind to before turn {turn}: {}", mode.label())];
    if let Some(conversation) = &preview.outcome.conversation {
        summary.push(format!(
            "conversation: {} turn(s) → {}",
            conversation.turns_before, conversation.turns_after
        ));
    }
    let mut diff = String::new();
    if let Some(code) = &preview.outcome.code {
        summary.push(match code.changes.len() {
            0 => "files: nothing to change".to_string(),
            n => format!("files: {n} path(s) change"),
        });
        for (root, skipped) in &code.not_covered {
            summary.push(format!(
                "not covered: {} ({})",
                root.join(&skipped.path).display(),
                skipped.reason
            ));
        }
        for file in &preview.diffs {
            let path = file.path.display().to_string();
            diff.push_str(&format!("diff --git a/{path} b/{path}\n"));
            diff.push_str(&file.diff);
        }
        let listed = preview.diffs.len();
        if code.changes.len() > listed {
            summary.push(format!(
                "(the first {listed} are shown; {} more change)",
                code.changes.len() - listed
            ));
        }
    }
    PreviewShown {
        summary,
        conflicts: preview
            .conflicts
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        diff,
    }
}
