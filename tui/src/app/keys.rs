//! Keys and pastes: the overlays and the approval take them first, then the composer.

use super::*;

impl App {
    pub fn on_paste(&mut self, text: &str) {
        if self.paste_into_deny_message(text) {
            return;
        }
        if self.approval_shown().is_none()
            && self.questions.is_empty()
            && self.overlay == Overlay::None
        {
            self.composer.paste(text);
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(actions) = self.approval_key(key) {
            return actions;
        }
        if let Some(pending) = self.questions.front_mut() {
            let Some(answers) = pending.on_key(key) else {
                return Vec::new();
            };
            let (thread, call_id) = (pending.thread, pending.call_id.clone());
            self.questions.pop_front();
            let client = self.threads[thread].client;
            return vec![Action::Submit {
                client,
                op: Op::UserInputAnswer { call_id, answers },
            }];
        }
        if !matches!(self.overlay, Overlay::None) {
            return self.overlay_key(key);
        }
        if self.composer.search_prompt().is_some() {
            // Ctrl+R's search takes every key until it ends (Enter keeps the match to edit).
            if let ComposerOutcome::Submitted(text) = self.composer.handle_key(key) {
                return self.submit_text(text);
            }
            return Vec::new();
        }
        let primed = std::mem::take(&mut self.esc_primed);
        match key.code {
            KeyCode::Char('o') if ctrl => {
                self.overlay = Overlay::Transcript(Box::default());
                return Vec::new();
            }
            KeyCode::Char('c') if ctrl => {
                if self.is_running(self.current) {
                    return self.interrupt();
                }
                if !self.composer.is_empty() {
                    self.composer.clear();
                    return Vec::new();
                }
                return self.quit();
            }
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => return self.quit(),
            KeyCode::Char('t') if ctrl => {
                self.overlay = Overlay::Threads {
                    selected: self.current,
                };
                return Vec::new();
            }
            KeyCode::Esc if self.is_running(self.current) => return self.interrupt(),
            KeyCode::Esc if self.composer.is_empty() => {
                if primed {
                    self.open_backtrack();
                } else {
                    self.esc_primed = true;
                }
                return Vec::new();
            }
            KeyCode::Esc => {
                self.composer.clear();
                return Vec::new();
            }
            KeyCode::Char('?')
                if self.composer.is_empty()
                    && !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                self.info(crate::shortcuts::sheet());
                return Vec::new();
            }
            _ => {}
        }
        if let Some(actions) = self.completion_key(key) {
            return actions;
        }
        // A recalled `/command` is history being walked, not a command being picked.
        let matches = if self.composer.is_browsing_history() {
            Vec::new()
        } else {
            slash::matching(self.composer.text())
        };
        if !matches.is_empty() {
            match key.code {
                KeyCode::Up => {
                    self.slash_selected = self.slash_selected.saturating_sub(1);
                    return Vec::new();
                }
                KeyCode::Down => {
                    self.slash_selected = (self.slash_selected + 1).min(matches.len() - 1);
                    return Vec::new();
                }
                KeyCode::Tab | KeyCode::Enter => {
                    let command = matches[self.slash_selected.min(matches.len() - 1)];
                    self.composer.clear();
                    self.slash_selected = 0;
                    self.composer.remember(format!("/{}", command.name()));
                    return self.run_slash(command, "");
                }
                _ => {}
            }
        }
        if key.code == KeyCode::Tab
            && self.is_running(self.current)
            && !self.composer.is_empty()
            && !self.composer.text().starts_with('/')
        {
            return self.queue_message();
        }
        match self.composer.handle_key(key) {
            ComposerOutcome::Submitted(text) => {
                self.slash_selected = 0;
                self.submit_text(text)
            }
            ComposerOutcome::Edited | ComposerOutcome::Ignored => {
                self.slash_selected = 0;
                self.completion_selected = 0;
                Vec::new()
            }
        }
    }

    fn submit_text(&mut self, text: String) -> Vec<Action> {
        if let Some(rest) = text.strip_prefix('/') {
            let (name, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            return match SlashCommand::parse(name) {
                Some(command) => self.run_slash(command, arg.trim()),
                None => {
                    self.info(format!("unknown command /{name}; /help lists them"));
                    Vec::new()
                }
            };
        }
        if let Some(command) = text.strip_prefix('!') {
            return self.run_shell_command(command.trim().to_string(), text.clone());
        }
        self.send_to(self.current, text)
    }

    /// Sends `text` as a message to thread `index`.
    pub(super) fn send_to(&mut self, index: usize, text: String) -> Vec<Action> {
        let entry = &mut self.threads[index];
        let items = vec![UserInput::Text { text: text.clone() }];
        let op = match (entry.is_agent, entry.id) {
            // Typed into a sub-agent's transcript: routed to it through its root.
            (true, Some(thread_id)) => Op::AgentUserInput { thread_id, items },
            (true, None) => {
                self.info("this sub-agent has not started yet");
                return Vec::new();
            }
            (false, _) => Op::UserInput { items },
        };
        entry.view.user_message(text.clone());
        if entry.untitled {
            entry.path = thread_title(&text);
            entry.untitled = false;
        }
        let mut actions = vec![Action::Submit {
            client: entry.client,
            op,
        }];
        actions.extend(self.remember_prompt(index, text));
        actions
    }
}
