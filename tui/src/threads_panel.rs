//! The threads panel (Ctrl+T, `/agents`): every thread of the process, sub-agents indented
//! under their root, each with its status (`running`, `waiting for approval`, `done`,
//! `failed`, `interrupted`, `idle`), elapsed time, tokens and current activity; under a
//! thread whose command is running, that command's latest output line, live.

use crate::app::{App, ThreadEntry};
use crate::cells::{format_duration, Cell};
use crate::sanitize::sanitize_line;
use crate::theme;
use crate::thread_view::ThreadStatus;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use std::time::Instant;

pub fn render(app: &App, selected: usize, frame: &mut Frame, area: Rect, now: Instant) {
    let mut lines = Vec::new();
    for (i, entry) in app.threads.iter().enumerate() {
        let view = &entry.view;
        let marker = if i == app.current { "●" } else { " " };
        let name = format!("{}{}", "  ".repeat(entry.depth), sanitize_line(&entry.path));
        let status = status_label(entry);
        let status_style = match status {
            "failed" | "interrupted" => theme::failure(),
            "waiting for approval" => theme::warning(),
            "running" => theme::accent(),
            "done" => theme::success(),
            _ => theme::dim(),
        };
        let line = Line::from(vec![
            Span::raw(format!("{marker} {name:<24} ")),
            Span::styled(format!("{status:<20} "), status_style),
            Span::raw(format!(
                "{:>7} {:>8} tok  ",
                elapsed(entry, now),
                view.total_usage.total_tokens
            )),
            Span::styled(sanitize_line(&view.activity), theme::dim()),
        ]);
        lines.push(if i == selected {
            line.style(theme::selected())
        } else {
            line
        });
        if let Some(output) = live_output(entry) {
            lines.push(Line::styled(
                format!(
                    "{}    └ {}",
                    "  ".repeat(entry.depth),
                    sanitize_line(output)
                ),
                theme::dim(),
            ));
        }
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" threads · ↑↓ select · Enter switch · Esc close ");
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// A sub-agent whose turn completed is `done` (it answered its parent); a root is `idle`,
/// waiting for the next message.
pub fn status_label(entry: &ThreadEntry) -> &'static str {
    match entry.view.status {
        ThreadStatus::Idle if entry.is_agent && last_turn_ms(entry).is_some() => "done",
        status => status.label(),
    }
}

/// A running turn's time so far (it ticks), else how long the last turn took.
fn elapsed(entry: &ThreadEntry, now: Instant) -> String {
    let ms = match entry.view.turn_started {
        Some(started) => now.saturating_duration_since(started).as_millis() as u64,
        None => match last_turn_ms(entry) {
            Some(ms) => ms,
            None => return "-".to_string(),
        },
    };
    format_duration(ms)
}

/// The last finished turn's duration (its footer's).
fn last_turn_ms(entry: &ThreadEntry) -> Option<u64> {
    entry.view.cells.iter().rev().find_map(|cell| match cell {
        Cell::TurnFooter { elapsed_ms, .. } => Some(*elapsed_ms),
        _ => None,
    })
}

/// The latest line a running command of this thread printed.
fn live_output(entry: &ThreadEntry) -> Option<&str> {
    entry.view.live.iter().rev().find_map(|cell| match cell {
        Cell::Command(command) if command.exit_code.is_none() => command
            .output
            .lines()
            .filter(|l| !l.trim().is_empty())
            .last(),
        _ => None,
    })
}
