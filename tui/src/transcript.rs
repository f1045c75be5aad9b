//! The transcript overlay (Ctrl+O; Codex's Ctrl+T): the current thread's whole transcript,
//! full screen, scrollable, with every kept line of each command's output and every
//! reasoning summary whole, and `/` search (`n`/`N` step through the matches).
//!
//! The finished cells' lines are built once (on opening, when cells were added, or when the
//! width changed), with each line's wrapped height, so a frame lays out only the visible
//! rows whatever the transcript's length; the live cells are added at each frame.

use crate::cells::{tail_lines, Cell};
use crate::theme;
use crate::thread_view::ThreadView;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

/// The overlay's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transcript {
    lines: Vec<Line<'static>>,
    /// Each line's rows at `width`.
    heights: Vec<usize>,
    /// Each line's text, lowercased, for the search.
    texts: Vec<String>,
    width: u16,
    /// Finished cells the lines were built from (and the thread's cell count then).
    built_cells: usize,
    /// The first row shown; `None` follows the end.
    scroll: Option<usize>,
    /// `/` pressed: the query being typed.
    typing: Option<String>,
    query: String,
    /// The line of the current match.
    current: Option<usize>,
    /// Rows the last frame showed (a page).
    page: usize,
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptKey {
    Stay,
    Close,
}

/// A cell as the transcript shows it: command and tool output whole (as far as kept),
/// reasoning expanded.
pub fn expanded_lines(cell: &Cell) -> Vec<Line<'static>> {
    match cell {
        Cell::Command(command) => {
            let mut lines: Vec<Line<'static>> = cell.lines().into_iter().take(1).collect();
            lines.extend(tail_lines(&command.output, usize::MAX));
            lines.push(Line::default());
            lines
        }
        Cell::Reasoning { text, .. } => Cell::Reasoning {
            text: text.clone(),
            expanded: true,
        }
        .lines(),
        cell => cell.lines(),
    }
}

fn line_text(line: &Line<'_>) -> String {
    line.spans
        .iter()
        .map(|s| s.content.as_ref())
        .collect::<String>()
        .to_lowercase()
}

fn rows_of(line: &Line<'static>, width: u16) -> usize {
    Paragraph::new(line.clone())
        .wrap(Wrap { trim: false })
        .line_count(width.max(1))
        .max(1)
}

impl Transcript {
    /// Brings the built lines up to date with `view` at `width` (the inner width).
    pub fn refresh(&mut self, view: &ThreadView, width: u16) {
        if width != self.width || view.cells.len() < self.built_cells {
            *self = Transcript {
                scroll: self.scroll,
                query: std::mem::take(&mut self.query),
                typing: self.typing.take(),
                ..Transcript::default()
            };
            self.width = width;
        }
        for cell in view.cells.iter().skip(self.built_cells) {
            for line in expanded_lines(cell) {
                self.heights.push(rows_of(&line, width));
                self.texts.push(line_text(&line));
                self.lines.push(line);
            }
        }
        self.built_cells = view.cells.len();
    }

    pub fn on_key(&mut self, key: KeyEvent) -> TranscriptKey {
        if let Some(typed) = self.typing.as_mut() {
            match key.code {
                KeyCode::Esc => self.typing = None,
                KeyCode::Enter => {
                    self.query = self.typing.take().unwrap_or_default().to_lowercase();
                    self.current = None;
                    self.step(false);
                }
                KeyCode::Backspace => {
                    typed.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => typed.push(c),
                _ => {}
            }
            return TranscriptKey::Stay;
        }
        let total = self.total_rows();
        let top = self.top(total);
        let page = self.page.max(1);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return TranscriptKey::Close,
            KeyCode::Char('o') if ctrl => return TranscriptKey::Close,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = Some(top.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => self.scroll = Some(top + 1),
            KeyCode::PageUp => self.scroll = Some(top.saturating_sub(page)),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll = Some(top + page),
            KeyCode::Home | KeyCode::Char('g') => self.scroll = Some(0),
            KeyCode::End | KeyCode::Char('G') => self.scroll = None,
            KeyCode::Char('/') => self.typing = Some(String::new()),
            KeyCode::Char('n') => self.step(false),
            KeyCode::Char('N') => self.step(true),
            _ => {}
        }
        if self.scroll.is_some_and(|s| s + page >= total) {
            self.scroll = None;
        }
        TranscriptKey::Stay
    }

    fn total_rows(&self) -> usize {
        self.heights.iter().sum()
    }

    /// The first row shown.
    fn top(&self, total: usize) -> usize {
        let last_page = total.saturating_sub(self.page.max(1));
        self.scroll.map_or(last_page, |s| s.min(last_page))
    }

    /// The next (or previous) line matching the query, scrolled into view.
    fn step(&mut self, backwards: bool) {
        if self.query.is_empty() {
            return;
        }
        let count = self.texts.len();
        let from = self
            .current
            .unwrap_or(if backwards { count } else { usize::MAX });
        let order: Vec<usize> = if backwards {
            (0..from.min(count))
                .rev()
                .chain((from.min(count)..count).rev())
                .collect()
        } else {
            let start = from.wrapping_add(1).min(count);
            (start..count).chain(0..start).collect()
        };
        if let Some(found) = order
            .into_iter()
            .find(|&i| self.texts[i].contains(&self.query))
        {
            self.current = Some(found);
            let row: usize = self.heights[..found].iter().sum();
            self.scroll = Some(row.saturating_sub(self.page / 3));
        }
    }

    fn matches(&self) -> usize {
        if self.query.is_empty() {
            return 0;
        }
        self.texts
            .iter()
            .filter(|t| t.contains(&self.query))
            .count()
    }

    /// Draws the overlay over `area`; the live cells of `view` follow the built lines.
    pub fn render(&mut self, view: &ThreadView, frame: &mut Frame, area: Rect) {
        let block = Block::default()
            .borders(Borders::ALL)
            .title(" transcript · ↑↓ PgUp PgDn Home End scroll · / search · n N next · Esc close ");
        let inner = block.inner(area);
        frame.render_widget(Clear, area);
        frame.render_widget(block, area);
        if inner.height < 2 || inner.width == 0 {
            return;
        }
        let body = Rect {
            height: inner.height - 1,
            ..inner
        };
        self.page = usize::from(body.height);
        let live: Vec<Line<'static>> = view.live.iter().flat_map(expanded_lines).collect();
        let live_heights: Vec<usize> = live.iter().map(|l| rows_of(l, body.width)).collect();
        let total = self.total_rows() + live_heights.iter().sum::<usize>();
        let last_page = total.saturating_sub(self.page);
        let top = self.scroll.map_or(last_page, |s| s.min(last_page));
        // The line holding row `top`, and how many of its rows are above the screen.
        let heights = self.heights.iter().chain(live_heights.iter());
        let (mut first, mut skip, mut row) = (0, 0, 0);
        for (i, h) in heights.enumerate() {
            if row + h > top {
                first = i;
                skip = top - row;
                break;
            }
            row += h;
            first = i + 1;
        }
        let built = self.lines.len();
        let mut shown = Vec::new();
        let mut rows = 0;
        for i in first.. {
            let line = match i.checked_sub(built) {
                None => self.styled(i),
                Some(j) => match live.get(j) {
                    Some(line) => line.clone(),
                    None => break,
                },
            };
            rows += if i < built {
                self.heights[i]
            } else {
                live_heights[i - built]
            };
            shown.push(line);
            if rows >= skip + self.page {
                break;
            }
        }
        frame.render_widget(
            Paragraph::new(shown)
                .wrap(Wrap { trim: false })
                .scroll((u16::try_from(skip).unwrap_or(u16::MAX), 0)),
            body,
        );
        let footer = match &self.typing {
            Some(typed) => Line::from(vec![
                Span::styled("/", theme::accent()),
                Span::raw(crate::sanitize::sanitize_line(typed)),
            ]),
            None if !self.query.is_empty() => Line::styled(
                format!(
                    "search `{}`: {} matching line{} · n next · N previous",
                    crate::sanitize::sanitize_line(&self.query),
                    self.matches(),
                    if self.matches() == 1 { "" } else { "s" }
                ),
                theme::dim(),
            ),
            None => Line::styled(
                format!("row {} of {total}", (top + self.page).min(total)),
                theme::dim(),
            ),
        };
        let footer_area = Rect {
            y: inner.y + inner.height - 1,
            height: 1,
            ..inner
        };
        frame.render_widget(Paragraph::new(footer), footer_area);
    }

    /// Built line `i`, marked when it is the current match.
    fn styled(&self, i: usize) -> Line<'static> {
        let line = self.lines[i].clone();
        if self.current == Some(i) {
            line.style(theme::selected())
        } else if !self.query.is_empty() && self.texts[i].contains(&self.query) {
            line.style(Style::default().add_modifier(ratatui::style::Modifier::UNDERLINED))
        } else {
            line
        }
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
