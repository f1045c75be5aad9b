//! More of [`App`]: the keys of the full-screen overlays (threads panel, /resume picker,
//! diff).

use super::{Action, App, Overlay};
use crate::slash;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

impl App {
    pub(super) fn overlay_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if let Overlay::Backtrack { selected } = self.overlay {
            return self.backtrack_key(key, selected);
        }
        if let Overlay::Rewind(_) = self.overlay {
            return self.rewind_key(key);
        }
        if let Overlay::Models(_) = self.overlay {
            return self.model_picker_key(key);
        }
        if let Overlay::Transcript(transcript) = &mut self.overlay {
            if transcript.on_key(key) == crate::transcript::TranscriptKey::Close {
                self.overlay = Overlay::None;
            }
            return Vec::new();
        }
        let count = self.threads.len();
        match &mut self.overlay {
            Overlay::None => Vec::new(),
            Overlay::Threads { selected } => {
                match key.code {
                    KeyCode::Up => *selected = selected.saturating_sub(1),
                    KeyCode::Down => *selected = (*selected + 1).min(count.saturating_sub(1)),
                    KeyCode::Enter => {
                        let index = *selected;
                        self.overlay = Overlay::None;
                        self.switch_to(index);
                    }
                    KeyCode::Esc | KeyCode::Char('q') => self.overlay = Overlay::None,
                    KeyCode::Char('t') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                        self.overlay = Overlay::None
                    }
                    _ => {}
                }
                Vec::new()
            }
            Overlay::Picker {
                items,
                selected,
                filter,
            } => {
                let visible = slash::filter_threads(items, filter);
                match key.code {
                    KeyCode::Up => *selected = selected.saturating_sub(1),
                    KeyCode::Down => {
                        *selected = (*selected + 1).min(visible.len().saturating_sub(1))
                    }
                    KeyCode::Backspace => {
                        filter.pop();
                        *selected = 0;
                    }
                    KeyCode::Char(c) => {
                        filter.push(c);
                        *selected = 0;
                    }
                    KeyCode::Enter => {
                        let chosen = visible.get(*selected).map(|t| t.rollout_path.clone());
                        self.overlay = Overlay::None;
                        return chosen.map(Action::Resume).into_iter().collect();
                    }
                    KeyCode::Esc => self.overlay = Overlay::None,
                    _ => {}
                }
                Vec::new()
            }
            // Handled above.
            Overlay::Backtrack { .. }
            | Overlay::Models(_)
            | Overlay::Transcript(_)
            | Overlay::Rewind(_) => Vec::new(),
            Overlay::Diff { scroll, text, .. } => {
                let last = crate::diff::rendered_rows(text).saturating_sub(1);
                match key.code {
                    KeyCode::Up => *scroll = scroll.saturating_sub(1),
                    KeyCode::Down => *scroll = scroll.saturating_add(1),
                    KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                    KeyCode::PageDown | KeyCode::Char(' ') => *scroll = scroll.saturating_add(10),
                    KeyCode::Home => *scroll = 0,
                    KeyCode::End => *scroll = u16::MAX,
                    KeyCode::Esc | KeyCode::Char('q') => {
                        self.overlay = Overlay::None;
                        return Vec::new();
                    }
                    _ => {}
                }
                *scroll = (*scroll).min(u16::try_from(last).unwrap_or(u16::MAX));
                Vec::new()
            }
        }
    }
}
