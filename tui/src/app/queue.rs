//! Messages queued with Tab for after a turn, and threads named by their first message.

use super::{Action, App};

impl App {
    /// A turn of thread `index` ended: the next queued message goes once it `completed`; an
    /// interrupted turn gives the queued messages back to the composer instead (the user
    /// stopped the work, so nothing is sent behind their back).
    pub(super) fn after_turn(&mut self, index: usize, completed: bool) -> Vec<Action> {
        if self.threads[index].queued.is_empty() {
            return Vec::new();
        }
        if completed {
            let Some(text) = self.threads[index].queued.pop_front() else {
                return Vec::new();
            };
            return self.send_to(index, text);
        }
        let queued: Vec<String> = self.threads[index].queued.drain(..).collect();
        if self.composer.is_empty() && index == self.current {
            self.composer.set_text(&queued.join("\n"));
        } else {
            self.threads[index].queued.extend(queued);
        }
        Vec::new()
    }

    /// Tab during a turn: the composer's text waits for the turn to end instead of steering it.
    pub(super) fn queue_message(&mut self) -> Vec<Action> {
        let text = self.composer.text().to_string();
        self.composer.clear();
        self.composer.remember(text.clone());
        self.info(format!(
            "queued for after this turn: {}",
            crate::sanitize::sanitize_line(&text)
        ));
        self.threads[self.current].queued.push_back(text);
        Vec::new()
    }

    /// Thread `index` is a fresh root: its first message becomes its name.
    pub fn name_by_first_message(&mut self, index: usize) {
        if let Some(entry) = self.threads.get_mut(index) {
            entry.untitled = true;
        }
    }

    /// Names thread `index` by `text` if it is still untitled (a prompt given on the
    /// command line, which does not go through the composer).
    pub fn title_from(&mut self, index: usize, text: &str) {
        if let Some(entry) = self.threads.get_mut(index).filter(|e| e.untitled) {
            entry.path = thread_title(text);
            entry.untitled = false;
        }
    }
}

/// Longest thread name taken from a first message, in characters.
const TITLE_CHARS: usize = 40;

/// A thread's name from its first message: the first non-empty line, cut with `…`.
pub fn thread_title(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = crate::sanitize::sanitize_line(line);
    if line.chars().count() > TITLE_CHARS {
        let cut: String = line.chars().take(TITLE_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        line
    }
}
