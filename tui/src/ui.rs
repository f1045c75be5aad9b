//! Drawing the viewport: live cells, the composer, the status line, and the overlays
//! (approval, threads panel, /resume picker, /diff, slash popup). Only what fits is laid
//! out: the transcript's finished cells are in the terminal's scrollback, not here.

use crate::app::{App, Overlay};
use crate::cells::Cell;
use crate::sanitize::sanitize_line;
use crate::slash;
use crate::theme;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;
use std::time::Instant;

/// Composer rows shown at most (longer text scrolls).
const COMPOSER_MAX_ROWS: u16 = 6;

pub fn render(app: &App, frame: &mut Frame, now: Instant) {
    let area = frame.area();
    let composer_rows = composer_rows(app);
    let [live, composer, status] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(composer_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(crate::status_line::fit(
            crate::status_line::segments(app, now),
            status.width,
        )),
        status,
    );
    if let Some(approval) = app.approval_shown() {
        // The overlay as tall as it needs; the live cells (what is running) above it.
        let above_status = Rect {
            height: area.height.saturating_sub(1),
            ..area
        };
        let height =
            crate::ui_approval::approval_height(app, approval, area.width).min(above_status.height);
        render_live(
            app,
            frame,
            Rect {
                height: above_status.height - height,
                ..above_status
            },
        );
        crate::ui_approval::render_approval(app, approval, frame, above_status);
        return;
    }
    if let Some(pending) = app.questions.front() {
        let area = Rect {
            height: area.height.saturating_sub(1),
            ..area
        };
        pending.render(&app.threads[pending.thread].path, frame, area);
        return;
    }
    let overlay_area = Rect {
        height: live.height + composer.height,
        ..live
    };
    match &app.overlay {
        Overlay::Threads { selected } => {
            return crate::threads_panel::render(app, *selected, frame, overlay_area, now)
        }
        Overlay::Picker {
            items,
            selected,
            filter,
        } => {
            return render_picker(
                &slash::filter_threads(items, filter),
                *selected,
                filter,
                frame,
                overlay_area,
            )
        }
        Overlay::Diff {
            scroll,
            title,
            text,
        } => return render_diff(title, text, *scroll, frame, overlay_area),
        Overlay::Backtrack { selected } => {
            return render_backtrack(app, *selected, frame, overlay_area)
        }
        Overlay::Models(picker) => {
            return crate::ui_pickers::render_models(picker, &app.status.model, frame, overlay_area)
        }
        Overlay::Rewind(picker) => {
            return crate::ui_pickers::render_rewind(picker, frame, overlay_area)
        }
        // Drawn full screen by the runner (`run::draw`), on the alternate screen.
        Overlay::Transcript(_) => return,
        Overlay::None => {}
    }
    render_live(app, frame, live);
    render_composer(app, frame, composer);
    let popup_hidden = app.composer.is_browsing_history() || app.composer.search_prompt().is_some();
    let matches = if popup_hidden {
        Vec::new()
    } else {
        slash::matching(app.composer.text())
    };
    if !matches.is_empty() && live.height > 0 {
        let rows = (matches.len() as u16).min(live.height);
        let popup = Rect {
            y: live.y + live.height - rows,
            height: rows,
            ..live
        };
        let selected = app.slash_selected.min(matches.len() - 1);
        // The window scrolls with the selection, so no command is out of reach.
        let first = (selected + 1).saturating_sub(rows as usize);
        let name_width = matches.iter().map(|c| c.name().len()).max().unwrap_or(0);
        let lines: Vec<Line> = matches
            .iter()
            .enumerate()
            .skip(first)
            .take(rows as usize)
            .map(|(i, c)| {
                let style = if i == selected {
                    theme::selected()
                } else {
                    theme::dim()
                };
                Line::styled(format!(" /{:<name_width$}  {}", c.name(), c.help()), style)
            })
            .collect();
        frame.render_widget(Clear, popup);
        frame.render_widget(Paragraph::new(lines), popup);
        return;
    }
    let choices = app.completion_choices();
    if !choices.is_empty() && live.height > 0 {
        let rows = (choices.len() as u16).min(live.height);
        let popup = Rect {
            y: live.y + live.height - rows,
            height: rows,
            ..live
        };
        let selected = app.completion_selected.min(choices.len() - 1);
        let lines: Vec<Line> = choices
            .iter()
            .enumerate()
            .map(|(i, choice)| {
                let style = if i == selected {
                    theme::selected()
                } else {
                    theme::dim()
                };
                let note = if choice.note.is_empty() {
                    String::new()
                } else {
                    format!("  {}", sanitize_line(&choice.note))
                };
                Line::styled(format!(" {}{note}", sanitize_line(&choice.label)), style)
            })
            .collect();
        frame.render_widget(Clear, popup);
        frame.render_widget(Paragraph::new(lines), popup);
    }
}

/// "Edit a previous message": the thread's turn-starting messages, newest last.
fn render_backtrack(app: &App, selected: usize, frame: &mut Frame, area: Rect) {
    let prompts = &app.current_view().prompts;
    let rows = area.height.saturating_sub(2) as usize;
    let first = selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = prompts
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, (turn, text))| {
            let line = Line::raw(format!("turn {turn:>3}  {}", sanitize_line(text)));
            if i == selected {
                line.style(theme::selected())
            } else {
                line
            }
        })
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" edit a previous message · ↑↓ select · Enter fork from it · Esc close ");
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// Rows the composer takes: its rule and its text (longer text scrolls).
fn composer_rows(app: &App) -> u16 {
    (app.composer.line_count() as u16).clamp(1, COMPOSER_MAX_ROWS) + 1
}

/// The rows the viewport needs for what it shows now, `max` at most: the viewport is sized
/// to its content (the scrollback keeps the rest of the screen). Overlays that list or
/// scroll (threads panel, pickers, diff, questions) take `max`.
pub fn wanted_height(app: &App, width: u16, max: u16) -> u16 {
    let width = width.max(1);
    let full = match &app.overlay {
        Overlay::None => false,
        Overlay::Threads { .. }
        | Overlay::Picker { .. }
        | Overlay::Diff { .. }
        | Overlay::Backtrack { .. }
        | Overlay::Models(_)
        | Overlay::Rewind(_)
        | Overlay::Transcript(_) => true,
    };
    if full || !app.questions.is_empty() {
        return max;
    }
    let live = live_rows(app, width, max);
    let rows = match app.approval_shown() {
        Some(approval) => {
            live.saturating_add(crate::ui_approval::approval_height(app, approval, width))
        }
        None => {
            let popup = slash::matching(app.composer.text())
                .len()
                .max(app.completion_choices().len());
            let popup = u16::try_from(popup).unwrap_or(u16::MAX);
            live.max(popup).saturating_add(composer_rows(app))
        }
    };
    rows.saturating_add(1).min(max)
}

/// Rows the live cells take at `width` (`max` at most).
fn live_rows(app: &App, width: u16, max: u16) -> u16 {
    let rows = Paragraph::new(live_lines(app, max))
        .wrap(Wrap { trim: false })
        .line_count(width);
    u16::try_from(rows).unwrap_or(u16::MAX).min(max)
}

/// The live cells' lines; a long stream contributes only its last `rows` lines.
fn live_lines(app: &App, rows: u16) -> Vec<Line<'static>> {
    let view = app.current_view();
    let mut lines: Vec<Line> = Vec::new();
    for cell in &view.live {
        match cell {
            Cell::Assistant {
                markdown,
                streaming: true,
            } => {
                // Lay out only the tail of a long stream.
                let start = markdown
                    .rmatch_indices('\n')
                    .nth(rows as usize)
                    .map_or(0, |(i, _)| i + 1);
                let tail = Cell::Assistant {
                    markdown: markdown[start..].to_string(),
                    streaming: true,
                };
                lines.extend(tail.lines());
            }
            cell => lines.extend(cell.lines()),
        }
    }
    if let Some(thinking) = view.thinking() {
        lines.push(Line::styled(
            format!("  thinking: {}", sanitize_line(thinking)),
            theme::dim(),
        ));
    }
    lines
}

fn render_live(app: &App, frame: &mut Frame, area: Rect) {
    let paragraph = Paragraph::new(live_lines(app, area.height)).wrap(Wrap { trim: false });
    let rows = paragraph.line_count(area.width.max(1)) as u16;
    let scroll = rows.saturating_sub(area.height);
    frame.render_widget(paragraph.scroll((scroll, 0)), area);
}

fn render_composer(app: &App, frame: &mut Frame, area: Rect) {
    let [rule, text_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let view = app.current_view();
    let searching = app.composer.search_prompt().map(|(query, found)| {
        let failing = if found || query.is_empty() {
            ""
        } else {
            "failing "
        };
        format!(" {failing}reverse-i-search: `{query}` · Ctrl+R older · Enter keep · Esc cancel ")
    });
    let hint = if let Some(searching) = &searching {
        searching.as_str()
    } else if app.threads.get(app.current).is_some_and(|t| t.is_agent) {
        " typing to a sub-agent · Ctrl+T threads "
    } else if app.esc_primed {
        " Esc again to edit a previous message "
    } else if app.is_running(app.current) {
        " typing queues a message for the running turn "
    } else {
        " Enter send · Ctrl+J newline · / commands · Ctrl+T threads "
    };
    let _ = view;
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!("─{hint}{}", "─".repeat(area.width as usize)),
            theme::dim(),
        )),
        rule,
    );
    let (row, col) = app.composer.cursor_position();
    let scroll = row.saturating_sub(text_area.height.saturating_sub(1));
    let text = if app.composer.is_empty() {
        Paragraph::new(Line::from(vec![
            Span::styled("› ", theme::user()),
            Span::styled(composer_placeholder(app), theme::dim()),
        ]))
    } else {
        let lines: Vec<Line> = app
            .composer
            .text()
            .split('\n')
            .enumerate()
            .map(|(i, l)| {
                Line::from(vec![
                    Span::styled(if i == 0 { "› " } else { "  " }, theme::user()),
                    Span::raw(sanitize_line(l)),
                ])
            })
            .collect();
        Paragraph::new(lines).scroll((scroll, 0))
    };
    frame.render_widget(text, text_area);
    let x = (text_area.x + 2 + col).min(text_area.right().saturating_sub(1));
    frame.set_cursor_position(Position {
        x,
        y: text_area.y + row - scroll,
    });
}

fn render_picker(
    items: &[&troupe_messages::threads::ThreadSummary],
    selected: usize,
    filter: &str,
    frame: &mut Frame,
    area: Rect,
) {
    let mut lines = vec![Line::from(vec![
        Span::styled("search: ", theme::dim()),
        Span::raw(sanitize_line(filter)),
    ])];
    let rows = area.height.saturating_sub(3) as usize;
    let first = selected.saturating_sub(rows.saturating_sub(1));
    for (i, thread) in items.iter().enumerate().skip(first).take(rows) {
        let line = Line::raw(format!(
            "{}  {:>3} turn{}  {}  {}",
            crate::thread_view::short_id(&thread.id.to_string()),
            thread.turns,
            if thread.turns == 1 { " " } else { "s" },
            sanitize_line(&thread.title),
            sanitize_line(&thread.cwd.display().to_string())
        ));
        lines.push(if i == selected {
            line.style(theme::selected())
        } else {
            line
        });
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" resume a thread · type to search · Enter resume · Esc close ");
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn render_diff(title: &str, text: &str, scroll: u16, frame: &mut Frame, area: Rect) {
    let mut lines = Vec::new();
    for file in crate::diff::split_files(text) {
        lines.extend(crate::diff::file_lines(&file));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" {title} · ↑↓ PgUp PgDn scroll · Esc close "));
    // The last screenful stays in view however far down it was scrolled.
    let max = lines
        .len()
        .saturating_sub(usize::from(area.height.saturating_sub(2)));
    let scroll = scroll.min(u16::try_from(max).unwrap_or(u16::MAX));
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((scroll, 0)), area);
}

/// The empty composer's hint: a sub-agent's thread is talked to, not tasked.
fn composer_placeholder(app: &App) -> String {
    match app.threads.get(app.current).filter(|t| t.is_agent) {
        Some(agent) => format!(
            "Message {} (sent to this sub-agent)",
            sanitize_line(&agent.path)
        ),
        None => "Ask troupe to do something".to_string(),
    }
}

#[cfg(test)]
#[path = "ui_tests.rs"]
mod tests;
