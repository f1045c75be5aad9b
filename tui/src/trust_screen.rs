//! The first-start screen in a folder the user has not decided about: trust it (commands may
//! write inside it, its project files are obeyed as they are now) or keep it read-only. It
//! runs before the session's settings are loaded, since the answer changes them.

use crate::terminal;
use crate::theme;
use crossterm::event::{Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use std::path::PathBuf;

/// What the screen asks about.
#[derive(Debug, Clone)]
pub struct TrustQuestion {
    pub dir: PathBuf,
    /// Whether the folder is inside a Git repository.
    pub version_controlled: bool,
    /// Project files (`.troupe/config.toml`, `.troupe/rules/*.rules`) trusting would pin.
    pub project_files: Vec<PathBuf>,
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAnswer {
    Trust,
    DoNotTrust,
    /// Esc or Ctrl+C: leave without opening a session.
    Quit,
}

/// Which option is highlighted, and what a key does to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrustChoice {
    /// 0: trust, 1: do not trust.
    pub selected: usize,
}

impl TrustChoice {
    /// A key's effect: `Some(answer)` when the key settles it.
    pub fn on_key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Option<TrustAnswer> {
        match code {
            KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => {
                Some(TrustAnswer::Quit)
            }
            KeyCode::Esc => Some(TrustAnswer::Quit),
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = 0;
                None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = 1;
                None
            }
            KeyCode::Char('1') | KeyCode::Char('y') => Some(TrustAnswer::Trust),
            KeyCode::Char('2') | KeyCode::Char('n') => Some(TrustAnswer::DoNotTrust),
            KeyCode::Enter if self.selected == 0 => Some(TrustAnswer::Trust),
            KeyCode::Enter => Some(TrustAnswer::DoNotTrust),
            _ => None,
        }
    }
}

/// The screen's lines.
pub fn trust_lines(question: &TrustQuestion, choice: TrustChoice) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::from(vec![
            Span::styled("> ", theme::dim()),
            Span::styled("You are in ", theme::bold()),
            Span::styled(question.dir.display().to_string(), theme::bold()),
        ]),
        Line::default(),
    ];
    if question.version_controlled {
        lines.push(Line::from(
            "  Do you trust this folder? Troupe has no record of it yet.",
        ));
    } else {
        lines.push(Line::from(
            "  This folder is not version controlled: changes Troupe makes here cannot be \
             undone with Git, so keep approvals on.",
        ));
    }
    lines.push(Line::default());
    lines.push(Line::from(
        "  Trusted: commands may edit files in this folder (workspace-write sandbox, no \
         network) and ask before anything more; its project files are obeyed as they are now.",
    ));
    lines.push(Line::from(
        "  Not trusted: commands stay read-only, every write asks first, project files are \
         ignored. `troupe trust` changes this later.",
    ));
    if !question.project_files.is_empty() {
        let names: Vec<String> = question
            .project_files
            .iter()
            .map(|p| {
                p.strip_prefix(&question.dir)
                    .unwrap_or(p)
                    .display()
                    .to_string()
            })
            .collect();
        lines.push(Line::from(format!(
            "  Project files trusting pins: {}",
            names.join(", ")
        )));
    }
    lines.push(Line::default());
    for (index, label) in ["Yes, trust this folder", "No, keep it read-only"]
        .iter()
        .enumerate()
    {
        let marker = if index == choice.selected {
            "› "
        } else {
            "  "
        };
        let style = if index == choice.selected {
            theme::user()
        } else {
            ratatui::style::Style::default()
        };
        lines.push(Line::styled(
            format!("{marker}{}. {label}", index + 1),
            style,
        ));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        "  Enter to confirm · ↑/↓ or 1/2 to choose · Esc to quit",
        theme::dim(),
    ));
    lines
}

/// Draws the screen into `area`.
pub fn render_trust(question: &TrustQuestion, choice: TrustChoice, area: Rect, buf: &mut Buffer) {
    Paragraph::new(trust_lines(question, choice))
        .wrap(Wrap { trim: false })
        .render(area, buf);
}

/// Rows the screen needs at `width`.
fn rows_needed(question: &TrustQuestion, width: u16) -> u16 {
    let lines = trust_lines(question, TrustChoice::default());
    let rows = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .line_count(width.max(1));
    u16::try_from(rows).unwrap_or(u16::MAX)
}

/// Shows the screen in an inline viewport until the user answers, then clears it. Input is
/// read synchronously on a blocking thread: an `EventStream` would leave its reader thread
/// behind, and that thread swallows the cursor-position reply the UI's own viewport waits for.
pub async fn ask_trust(question: &TrustQuestion) -> std::io::Result<TrustAnswer> {
    let question = question.clone();
    tokio::task::spawn_blocking(move || ask_blocking(&question))
        .await
        .map_err(std::io::Error::other)?
}

fn ask_blocking(question: &TrustQuestion) -> std::io::Result<TrustAnswer> {
    theme::init_from_env();
    let (width, rows) = crossterm::terminal::size()?;
    let height = rows_needed(question, width).saturating_add(1).min(rows);
    let mut tui = terminal::init_with_height(height)?;
    let answer = trust_loop(&mut tui, question);
    let _ = tui.clear();
    terminal::restore();
    answer
}

fn trust_loop(tui: &mut terminal::Tui, question: &TrustQuestion) -> std::io::Result<TrustAnswer> {
    let mut choice = TrustChoice::default();
    loop {
        tui.draw(|frame| render_trust(question, choice, frame.area(), frame.buffer_mut()))?;
        if let TermEvent::Key(key) = crossterm::event::read()? {
            if key.kind == KeyEventKind::Release {
                continue;
            }
            if let Some(answer) = choice.on_key(key.code, key.modifiers) {
                return Ok(answer);
            }
        }
    }
}

#[cfg(test)]
#[path = "trust_screen_tests.rs"]
mod tests;
