//! `troupe resume` without an id: a picker over the recorded threads before any session
//! opens (as Codex's `codex resume`). Newest first, each with when it was last active, its
//! directory and its title; type to search; sub-agents' threads hidden until Tab shows them.
//! Enter resumes, Esc starts a new thread instead, Ctrl+C leaves. Like the trust screen it
//! has its own inline viewport and reads keys on a blocking thread.

use crate::sanitize::sanitize_line;
use crate::terminal;
use crate::theme;
use crossterm::event::{Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use troupe_messages::threads::ThreadSummary;

/// What the user chose.
#[derive(Debug, Clone, PartialEq)]
pub enum ResumeAnswer {
    Resume(Box<ThreadSummary>),
    /// Esc: a new thread, as plain `troupe` would open.
    New,
    Quit,
}

/// The picker's state (pure: keys in, an answer out).
#[derive(Debug, Clone)]
pub struct ResumePicker {
    /// Newest first.
    items: Vec<ThreadSummary>,
    pub selected: usize,
    pub filter: String,
    pub show_agents: bool,
}

impl ResumePicker {
    pub fn new(mut items: Vec<ThreadSummary>) -> Self {
        items.retain(|t| !t.archived);
        items.sort_by_key(|t| std::cmp::Reverse(t.updated_at_ms));
        Self {
            items,
            selected: 0,
            filter: String::new(),
            show_agents: false,
        }
    }

    /// The rows shown: roots (and sub-agents after Tab) matching the search.
    pub fn visible(&self) -> Vec<&ThreadSummary> {
        let filter = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|t| self.show_agents || t.task_path.is_none())
            .filter(|t| {
                filter.is_empty()
                    || t.title.to_lowercase().contains(&filter)
                    || t.id.to_string().contains(&filter)
                    || t.cwd.display().to_string().to_lowercase().contains(&filter)
            })
            .collect()
    }

    pub fn on_key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<ResumeAnswer> {
        let count = self.visible().len();
        match code {
            KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => {
                return Some(ResumeAnswer::Quit)
            }
            KeyCode::Esc => return Some(ResumeAnswer::New),
            KeyCode::Enter => {
                return self
                    .visible()
                    .get(self.selected)
                    .map(|t| ResumeAnswer::Resume(Box::new((*t).clone())))
            }
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(count.saturating_sub(1)),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.selected = (self.selected + 10).min(count.saturating_sub(1)),
            KeyCode::Tab => {
                self.show_agents = !self.show_agents;
                self.selected = 0;
            }
            KeyCode::Backspace => {
                self.filter.pop();
                self.selected = 0;
            }
            KeyCode::Char(c)
                if !modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                self.filter.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        None
    }

    /// The screen at `height` rows; `now_ms` dates the rows.
    pub fn lines(&self, height: u16, now_ms: i64) -> Vec<Line<'static>> {
        let visible = self.visible();
        let hidden = self.items.iter().filter(|t| t.task_path.is_some()).count();
        let agents = match (self.show_agents, hidden) {
            (_, 0) => String::new(),
            (true, _) => " · Tab hides sub-agents".to_string(),
            (false, n) => format!(" · Tab shows {n} sub-agent thread{}", plural(n)),
        };
        let mut lines = vec![
            Line::styled("Resume a thread", theme::bold()),
            Line::from(vec![
                Span::styled("search: ", theme::dim()),
                Span::raw(sanitize_line(&self.filter)),
            ]),
        ];
        let rows = usize::from(height.saturating_sub(4));
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        if visible.is_empty() {
            lines.push(Line::styled(
                "  no recorded thread matches (Esc starts a new one)",
                theme::dim(),
            ));
        }
        let cwd_width = visible
            .iter()
            .map(|t| t.cwd.display().to_string().chars().count())
            .max()
            .unwrap_or(0)
            .min(40);
        for (i, thread) in visible.iter().enumerate().skip(first).take(rows) {
            let title = match &thread.task_path {
                Some(path) => format!("↳ {path} {}", thread.title),
                None => thread.title.clone(),
            };
            let text = format!(
                "{:<10} {:<cwd_width$}  {}",
                relative_time(now_ms, thread.updated_at_ms),
                sanitize_line(&thread.cwd.display().to_string()),
                sanitize_line(title.lines().next().unwrap_or("")),
            );
            lines.push(if i == self.selected {
                Line::styled(format!("› {text}"), theme::selected())
            } else {
                Line::raw(format!("  {text}"))
            });
        }
        while lines.len() + 1 < usize::from(height) {
            lines.push(Line::default());
        }
        lines.push(Line::styled(
            format!("Enter resume · Esc new thread · Ctrl+C quit{agents}"),
            theme::dim(),
        ));
        lines
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, now_ms: i64) {
        Paragraph::new(self.lines(area.height, now_ms)).render(area, buf);
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `just now`, `5m ago`, `3h ago`, `2d ago`, then the date.
pub fn relative_time(now_ms: i64, then_ms: i64) -> String {
    let seconds = (now_ms - then_ms).max(0) / 1000;
    match seconds {
        0..=59 => "just now".to_string(),
        60..=3599 => format!("{}m ago", seconds / 60),
        3600..=86_399 => format!("{}h ago", seconds / 3600),
        86_400..=2_591_999 => format!("{}d ago", seconds / 86_400),
        _ => chrono::DateTime::from_timestamp_millis(then_ms)
            .map(|t| t.format("%Y-%m-%d").to_string())
            .unwrap_or_default(),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// Shows the picker until the user answers, then clears it.
pub async fn ask_resume(items: Vec<ThreadSummary>) -> std::io::Result<ResumeAnswer> {
    tokio::task::spawn_blocking(move || {
        theme::init_from_env();
        let (_, rows) = crossterm::terminal::size()?;
        let mut tui = terminal::init_with_height(rows)?;
        let answer = pick_loop(&mut tui, ResumePicker::new(items));
        let _ = tui.clear();
        terminal::restore();
        answer
    })
    .await
    .map_err(std::io::Error::other)?
}

fn pick_loop(tui: &mut terminal::Tui, mut picker: ResumePicker) -> std::io::Result<ResumeAnswer> {
    loop {
        tui.draw(|frame| picker.render(frame.area(), frame.buffer_mut(), now_ms()))?;
        if let TermEvent::Key(key) = crossterm::event::read()? {
            if key.kind == KeyEventKind::Release {
                continue;
            }
            if let Some(answer) = picker.on_key(key.code, key.modifiers) {
                return Ok(answer);
            }
        }
    }
}

#[cfg(test)]
#[path = "resume_picker_tests.rs"]
mod tests;
