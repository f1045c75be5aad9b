//! More of [`App`]: the `@`/`$` completion popup, "edit a previous message" (Esc Esc),
//! collapsible reasoning, and the /permissions, /plan and /reasoning commands.

use super::{override_op, Action, App, Overlay};
use crate::completion::{self, Choice};
use crossterm::event::{KeyCode, KeyEvent};
use troupe_messages::ops::Op;
use troupe_messages::policy::CollaborationMode;

impl App {
    /// The completion popup's choices for the composer's text at the cursor.
    pub fn completion_choices(&self) -> Vec<Choice> {
        match completion::token_at(self.composer.text(), self.composer.cursor()) {
            Some(token) => completion::choices(&token, &self.files, &self.skills),
            None => Vec::new(),
        }
    }

    /// A key while the completion popup is open: Up/Down select, Tab/Enter insert. `None`
    /// when the popup is closed or the key is for the composer.
    pub(super) fn completion_key(&mut self, key: KeyEvent) -> Option<Vec<Action>> {
        if !matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::Enter
        ) {
            return None;
        }
        let token = completion::token_at(self.composer.text(), self.composer.cursor())?;
        let choices = completion::choices(&token, &self.files, &self.skills);
        if choices.is_empty() {
            return None;
        }
        let last = choices.len() - 1;
        match key.code {
            KeyCode::Up => self.completion_selected = self.completion_selected.saturating_sub(1),
            KeyCode::Down => self.completion_selected = (self.completion_selected + 1).min(last),
            _ => {
                let choice = &choices[self.completion_selected.min(last)];
                let insert = format!("{} ", choice.insert);
                self.composer
                    .replace_range(token.start, token.end, insert.as_str());
                self.completion_selected = 0;
            }
        }
        Some(Vec::new())
    }

    pub(super) fn toggle_reasoning(&mut self, arg: &str) -> Vec<Action> {
        self.show_reasoning = match arg {
            "on" | "expanded" => true,
            "off" | "collapsed" => false,
            _ => !self.show_reasoning,
        };
        let state = if self.show_reasoning {
            "reasoning is shown expanded"
        } else {
            "reasoning is collapsed to one line (Ctrl+O: the transcript shows it whole)"
        };
        self.info(state);
        Vec::new()
    }

    pub(super) fn permissions(&mut self, arg: &str) -> Vec<Action> {
        if arg.is_empty() {
            self.info(format!(
                "sandbox: {} · approvals: {}\nchange with /permissions read-only | auto | full-access, or /permissions SANDBOX [APPROVAL] (read-only, workspace-write, danger-full-access; untrusted, on-request, on-failure, never)",
                self.status.sandbox.as_str(),
                self.status.approval.as_str()
            ));
            return Vec::new();
        }
        let Some((sandbox, approval)) = crate::slash::parse_permissions(arg) else {
            self.info(format!(
                "unknown permissions `{}`: use read-only, auto, full-access, or SANDBOX [APPROVAL]",
                crate::sanitize::sanitize_line(arg)
            ));
            return Vec::new();
        };
        self.status.sandbox = sandbox;
        if let Some(policy) = approval {
            self.status.approval = policy;
        }
        self.info(format!(
            "permissions for the next turns: sandbox {} · approvals {}",
            self.status.sandbox.as_str(),
            self.status.approval.as_str()
        ));
        self.submit_current(override_op(None, approval, Some(sandbox)))
    }

    pub(super) fn toggle_plan(&mut self) -> Vec<Action> {
        self.status.plan_mode = !self.status.plan_mode;
        let (mode, text) = if self.status.plan_mode {
            (
                CollaborationMode::Plan,
                "plan mode on: the agent investigates read-only and proposes a plan (/plan again to leave)",
            )
        } else {
            (
                CollaborationMode::Default,
                "plan mode off: the agent does the work",
            )
        };
        self.info(text);
        self.submit_current(Op::OverrideTurnContext {
            model: None,
            approval_policy: None,
            sandbox_mode: None,
            cwd: None,
            collaboration_mode: Some(mode),
        })
    }

    fn submit_current(&self, op: Op) -> Vec<Action> {
        vec![Action::Submit {
            client: self.threads[self.current].client,
            op,
        }]
    }

    /// Esc Esc on an empty composer: pick one of this thread's earlier messages.
    pub(super) fn open_backtrack(&mut self) {
        let entry = &self.threads[self.current];
        if entry.is_agent {
            self.info("a sub-agent's messages cannot be edited; switch to its root (Ctrl+T)");
            return;
        }
        match entry.view.prompts.len() {
            0 => self.info("no earlier message to edit in this thread"),
            n => {
                self.overlay = Overlay::Backtrack { selected: n - 1 };
            }
        }
    }

    pub(super) fn backtrack_key(&mut self, key: KeyEvent, selected: usize) -> Vec<Action> {
        let entry = &self.threads[self.current];
        let count = entry.view.prompts.len();
        let chosen = entry.view.prompts.get(selected).cloned();
        let id = entry.id;
        let selected = match key.code {
            KeyCode::Up | KeyCode::Left => selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Right => (selected + 1).min(count.saturating_sub(1)),
            KeyCode::Enter => {
                self.overlay = Overlay::None;
                return match (chosen, id, self.is_running(self.current)) {
                    (_, _, true) => {
                        self.info("the turn is still running: interrupt it (Esc) first");
                        Vec::new()
                    }
                    (Some((turn, text)), Some(thread), false) => {
                        vec![Action::EditFrom { thread, turn, text }]
                    }
                    _ => Vec::new(),
                };
            }
            KeyCode::Esc | KeyCode::Char('q') => {
                self.overlay = Overlay::None;
                return Vec::new();
            }
            _ => selected,
        };
        self.overlay = Overlay::Backtrack { selected };
        Vec::new()
    }
}
