//! The composer: a multi-line text box with history and collapsed pastes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_width::UnicodeWidthStr;

/// Pastes longer than this (in characters) are shown as a placeholder.
pub const PASTE_COLLAPSE_CHARS: usize = 1000;
/// History entries kept.
const HISTORY_MAX: usize = 1000;

/// What a key did to the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerOutcome {
    /// Nothing the app must act on (the text may have changed).
    Edited,
    /// Enter on a non-empty composer: the full text (placeholders expanded).
    Submitted(String),
    /// The key means nothing to the composer.
    Ignored,
}

#[derive(Debug, Default)]
pub struct Composer {
    text: String,
    /// Byte offset of the cursor in `text`.
    cursor: usize,
    history: Vec<String>,
    /// Position while browsing history (`history.len()` = the draft).
    browsing: Option<usize>,
    draft: String,
    /// Placeholder → pasted text.
    pastes: Vec<(String, String)>,
    /// Ctrl+R's reverse incremental search through the history, while it runs.
    search: Option<HistorySearch>,
}

/// A reverse incremental search: the text shown is the newest entry (older than the last
/// match, on each Ctrl+R) containing the query; Esc puts back what was typed before.
#[derive(Debug, Default)]
struct HistorySearch {
    query: String,
    /// Index in the history of the entry shown.
    matched: Option<usize>,
    saved_text: String,
    saved_cursor: usize,
}

impl Composer {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Byte offset of the cursor.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces bytes `start..end` (char boundaries) with `text`; the cursor goes after it.
    pub fn replace_range(&mut self, start: usize, end: usize, text: &str) {
        if start > end || end > self.text.len() || !self.text.is_char_boundary(start) {
            return;
        }
        if !self.text.is_char_boundary(end) {
            return;
        }
        self.text.replace_range(start..end, text);
        self.cursor = start + text.len();
    }

    /// Entries from earlier sessions (oldest first), before this session's own.
    pub fn load_history(&mut self, entries: Vec<String>) {
        let mut history = entries;
        history.append(&mut self.history);
        let excess = history.len().saturating_sub(HISTORY_MAX);
        history.drain(..excess);
        self.history = history;
        self.browsing = None;
    }

    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.pastes.clear();
        self.browsing = None;
        self.search = None;
    }

    /// The cursor's (row, column) in display cells.
    pub fn cursor_position(&self) -> (u16, u16) {
        let before = &self.text[..self.cursor];
        let row = before.matches('\n').count();
        let col = before.rsplit('\n').next().unwrap_or("").width();
        (row as u16, col as u16)
    }

    pub fn line_count(&self) -> usize {
        self.text.split('\n').count()
    }

    /// A bracketed paste: inserted as is, or as a placeholder when large.
    pub fn paste(&mut self, pasted: &str) {
        let pasted = pasted.replace("\r\n", "\n").replace('\r', "\n");
        let chars = pasted.chars().count();
        if chars > PASTE_COLLAPSE_CHARS {
            let placeholder = format!(
                "[Pasted {} lines, {chars} chars #{}]",
                pasted.lines().count(),
                self.pastes.len() + 1
            );
            self.insert(&placeholder);
            self.pastes.push((placeholder, pasted));
        } else {
            self.insert(&pasted);
        }
    }

    pub fn insert(&mut self, text: &str) {
        self.text.insert_str(self.cursor, text);
        self.cursor += text.len();
    }

    /// Whether Up/Down currently walk the history (a recalled entry is shown).
    pub fn is_browsing_history(&self) -> bool {
        self.browsing.is_some_and(|at| at < self.history.len())
    }

    /// The search's query and whether an entry matches it, while Ctrl+R's search runs.
    pub fn search_prompt(&self) -> Option<(&str, bool)> {
        self.search
            .as_ref()
            .map(|search| (search.query.as_str(), search.matched.is_some()))
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if self.search.is_some() {
            match self.search_key(key) {
                Some(outcome) => return outcome,
                // Any other key takes the match as the text and then does what it does.
                None => self.search = None,
            }
        } else if ctrl && key.code == KeyCode::Char('r') {
            self.search = Some(HistorySearch {
                saved_text: self.text.clone(),
                saved_cursor: self.cursor,
                ..HistorySearch::default()
            });
            return ComposerOutcome::Edited;
        }
        let newline = key
            .modifiers
            .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if newline => self.insert("\n"),
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Enter => return self.submit(),
            KeyCode::Char('u') if ctrl => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
            }
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char(_) if ctrl => return ComposerOutcome::Ignored,
            KeyCode::Char(c) => self.insert(c.encode_utf8(&mut [0; 4])),
            KeyCode::Backspace => {
                if let Some(prev) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= prev.len_utf8();
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Delete => {
                if self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Left => {
                if let Some(prev) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= prev.len_utf8();
                }
            }
            KeyCode::Right => {
                if let Some(next) = self.text[self.cursor..].chars().next() {
                    self.cursor += next.len_utf8();
                }
            }
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            // Up/Down move between lines; on the first/last line they browse history.
            KeyCode::Up if self.text[..self.cursor].contains('\n') => self.move_vertically(-1),
            KeyCode::Down if self.text[self.cursor..].contains('\n') => self.move_vertically(1),
            KeyCode::Up => self.browse(-1),
            KeyCode::Down => self.browse(1),
            _ => return ComposerOutcome::Ignored,
        }
        ComposerOutcome::Edited
    }

    /// A key while the search runs; `None` when the key ends it and acts as usual.
    fn search_key(&mut self, key: KeyEvent) -> Option<ComposerOutcome> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let search = self.search.as_mut()?;
        match key.code {
            KeyCode::Char('r') if ctrl => {
                let before = search.matched.unwrap_or(self.history.len());
                self.find_match(before);
            }
            KeyCode::Esc => self.cancel_search(),
            KeyCode::Char('g' | 'c') if ctrl => self.cancel_search(),
            // Enter keeps the match in the composer to be edited or sent.
            KeyCode::Enter => {
                self.search = None;
                self.cursor = self.text.len();
            }
            KeyCode::Backspace => {
                search.query.pop();
                self.find_match(self.history.len());
            }
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                // The shown entry stays while it still matches.
                let from = search.matched.map_or(self.history.len(), |at| at + 1);
                self.find_match(from);
            }
            _ => return None,
        }
        Some(ComposerOutcome::Edited)
    }

    /// Shows the newest entry before index `before` that holds the query (the text is left
    /// as it is when none does).
    fn find_match(&mut self, before: usize) {
        let Some(search) = self.search.as_mut() else {
            return;
        };
        if search.query.is_empty() {
            search.matched = None;
            return;
        }
        let found = self.history[..before.min(self.history.len())]
            .iter()
            .rposition(|entry| entry.contains(&search.query));
        if let Some(at) = found {
            search.matched = Some(at);
            let entry = self.history[at].clone();
            self.set_text(&entry);
        } else if before >= self.history.len() {
            search.matched = None;
        }
    }

    fn cancel_search(&mut self) {
        if let Some(search) = self.search.take() {
            self.text = search.saved_text;
            self.cursor = search.saved_cursor;
        }
    }

    fn submit(&mut self) -> ComposerOutcome {
        if self.text.trim().is_empty() {
            return ComposerOutcome::Edited;
        }
        let mut full = self.text.clone();
        for (placeholder, pasted) in &self.pastes {
            full = full.replacen(placeholder.as_str(), pasted, 1);
        }
        self.remember(self.text.clone());
        self.clear();
        ComposerOutcome::Submitted(full)
    }

    /// Adds an entry to the history (also used for slash commands).
    pub fn remember(&mut self, entry: String) {
        if self.history.last() != Some(&entry) {
            self.history.push(entry);
            if self.history.len() > HISTORY_MAX {
                self.history.remove(0);
            }
        }
        self.browsing = None;
    }

    fn browse(&mut self, step: isize) {
        if self.history.is_empty() {
            return;
        }
        let len = self.history.len();
        let current = self.browsing.unwrap_or(len);
        if current == len {
            self.draft = self.text.clone();
        }
        let next = (current as isize + step).clamp(0, len as isize) as usize;
        self.browsing = Some(next);
        let text = if next == len {
            self.draft.clone()
        } else {
            self.history[next].clone()
        };
        self.set_text(&text);
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    fn move_vertically(&mut self, step: isize) {
        let (_, col) = self.cursor_position();
        let target_start = if step < 0 {
            let start = self.line_start();
            self.text[..start.saturating_sub(1)]
                .rfind('\n')
                .map_or(0, |i| i + 1)
        } else {
            self.line_end() + 1
        };
        let line_end = self.text[target_start..]
            .find('\n')
            .map_or(self.text.len(), |i| target_start + i);
        let mut pos = target_start;
        let mut width = 0usize;
        for (i, ch) in self.text[target_start..line_end].char_indices() {
            if width >= col as usize {
                break;
            }
            width += unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            pos = target_start + i + ch.len_utf8();
        }
        self.cursor = pos;
    }
}

#[cfg(test)]
#[path = "composer_tests.rs"]
mod tests;
