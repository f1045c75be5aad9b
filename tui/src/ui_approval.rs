//! The approval overlay: what asks (command and directory, or the patch's files), why, and
//! the keys; a box sized to its content at the bottom of the viewport, the live cells above.

use crate::app::approvals::grants_one_thing;
use crate::app::{App, ApprovalSubject, PendingApproval};
use crate::sanitize::sanitize_line;
use crate::theme;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;
use troupe_messages::permissions::SandboxRetry;

/// The overlay's keys, two lines. A sandbox retry asking for one directory or the network
/// offers that (for the session) and, apart, running without the sandbox.
fn approval_keys(retry: Option<&SandboxRetry>) -> [Line<'static>; 2] {
    if let Some(one) = retry.filter(|r| grants_one_thing(Some(r))) {
        let allow = match one {
            SandboxRetry::Write { .. } => " allow writing there (this session)  ",
            SandboxRetry::Network | SandboxRetry::Unconfined => " allow network (this session)  ",
        };
        return [
            Line::from(vec![
                Span::styled("y", theme::success()),
                Span::raw(allow),
                Span::styled("u", theme::warning()),
                Span::raw(" run without the sandbox (once)"),
            ]),
            Line::from(vec![
                Span::styled("n", theme::failure()),
                Span::raw(" deny  "),
                Span::styled("d", theme::failure()),
                Span::raw(" deny and say what to do instead  "),
                Span::styled("o", theme::accent()),
                Span::raw(" open the thread  "),
                Span::styled("Esc", theme::failure()),
                Span::raw(" abort"),
            ]),
        ];
    }
    [
        Line::from(vec![
            Span::styled("y", theme::success()),
            Span::raw(" approve once  "),
            Span::styled("a", theme::success()),
            Span::raw(" approve for the session  "),
            Span::styled("n", theme::failure()),
            Span::raw(" deny  "),
            Span::styled("Esc", theme::failure()),
            Span::raw(" abort the turn"),
        ]),
        Line::from(vec![
            Span::styled("d", theme::failure()),
            Span::raw(" deny and say what to do instead  "),
            Span::styled("o", theme::accent()),
            Span::raw(" open the asking thread"),
        ]),
    ]
}

/// The lines inside the box, for a box `width` cells wide, and (while a deny message is
/// typed) the cursor's place among them: (line, column).
fn approval_lines(
    app: &App,
    approval: &PendingApproval,
    width: u16,
) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
    let mut lines = Vec::new();
    match &approval.subject {
        ApprovalSubject::Command { command, cwd } => {
            lines.push(Line::from(vec![
                Span::styled("$ ", theme::accent()),
                Span::styled(sanitize_line(command), theme::bold()),
            ]));
            lines.push(Line::styled(
                format!("in {}", sanitize_line(&cwd.display().to_string())),
                theme::dim(),
            ));
        }
        ApprovalSubject::Patch { files } => {
            lines.push(Line::styled(
                format!("apply a patch to {} file(s):", files.len()),
                theme::bold(),
            ));
            for file in files {
                lines.push(Line::raw(format!(
                    "  {}",
                    sanitize_line(&file.display().to_string())
                )));
            }
        }
    }
    if let Some(reason) = &approval.reason {
        // A sandbox retry's reason is its question.
        let label = if approval.sandbox_retry.is_some() {
            "the sandbox refused it: "
        } else {
            "reason: "
        };
        lines.push(Line::styled(
            format!("{label}{}", sanitize_line(reason)),
            theme::warning(),
        ));
    }
    lines.push(Line::default());
    let mut cursor = None;
    match &app.deny_message {
        Some(message) => {
            lines.push(Line::styled(
                "deny, and tell the model what to do instead:",
                theme::bold(),
            ));
            // One line: the end of what was typed stays in view.
            let room = usize::from(width.saturating_sub(5)).max(1);
            let shown: String = {
                let chars: Vec<char> = message.chars().collect();
                chars[chars.len().saturating_sub(room)..].iter().collect()
            };
            cursor = Some((lines.len() as u16, 2 + shown.chars().count() as u16));
            lines.push(Line::from(vec![
                Span::styled("› ", theme::accent()),
                Span::raw(sanitize_line(&shown)),
            ]));
            lines.push(Line::from(vec![
                Span::styled("Enter", theme::failure()),
                Span::raw(" deny with this message  "),
                Span::styled("Esc", theme::accent()),
                Span::raw(" back to the choices"),
            ]));
        }
        None => lines.extend(approval_keys(approval.sandbox_retry.as_ref())),
    }
    (lines, cursor)
}

/// Rows the overlay takes at `width`: its wrapped lines and the border.
pub fn approval_height(app: &App, approval: &PendingApproval, width: u16) -> u16 {
    let (lines, _) = approval_lines(app, approval, width);
    let rows = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .line_count(width.saturating_sub(2).max(1));
    u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2)
}

/// Draws the overlay at the bottom of `area`, as tall as its content (all of `area` at most).
pub fn render_approval(app: &App, approval: &PendingApproval, frame: &mut Frame, area: Rect) {
    let entry = &app.threads[approval.thread];
    let height = approval_height(app, approval, area.width).min(area.height);
    let area = Rect {
        y: area.bottom() - height,
        height,
        ..area
    };
    let (lines, cursor) = approval_lines(app, approval, area.width);
    if let Some((row, column)) = cursor {
        // Inside the border.
        frame.set_cursor_position(Position {
            x: (area.x + 1 + column).min(area.right().saturating_sub(2)),
            y: (area.y + 1 + row).min(area.bottom().saturating_sub(2)),
        });
    }
    let more = if app.approvals.len() > 1 {
        format!(" (+{} more)", app.approvals.len() - 1)
    } else {
        String::new()
    };
    let title = format!(" approval needed · {}{more} ", sanitize_line(&entry.path));
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, theme::warning()));
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        area,
    );
}
