//! The status line under the composer: model and effort, approval policy, sandbox mode,
//! context gauge, cwd and git branch, pending approvals, and the running turn's timer.

use crate::app::App;
use crate::cells::format_duration;
use crate::theme;
use ratatui::text::{Line, Span};
use std::path::Path;
use std::time::Instant;

/// `42% left (58k/128k)`, or the tokens used when the window is unknown.
pub fn context_text(used: u64, window: Option<u64>) -> String {
    match window {
        Some(window) if window > 0 => {
            let left = 100u64.saturating_sub(used.saturating_mul(100) / window);
            format!("{left}% left ({}k/{}k)", used / 1000, window / 1000)
        }
        _ => format!("{}k used", used / 1000),
    }
}

/// A ten-cell gauge of the context used.
fn gauge(used: u64, window: Option<u64>) -> String {
    let Some(window) = window.filter(|w| *w > 0) else {
        return String::new();
    };
    let filled = (used.saturating_mul(10) / window).min(10) as usize;
    format!("[{}{}] ", "█".repeat(filled), "░".repeat(10 - filled))
}

pub fn line(app: &App, now: Instant) -> Line<'static> {
    let status = &app.status;
    let view = app.current_view();
    let mut spans = Vec::new();
    // First, so a narrow terminal still shows whose transcript this is.
    if let Some(entry) = app.threads.get(app.current).filter(|t| t.is_agent) {
        spans.push(Span::styled(
            format!("viewing {} · ", crate::sanitize::sanitize_line(&entry.path)),
            theme::warning(),
        ));
    }
    if let Some(started) = view.turn_started {
        spans.push(Span::styled(
            format!(
                "● working {} · {}",
                format_duration(now.duration_since(started).as_millis() as u64),
                // Esc answers an approval set aside with `o` first.
                if app.approvals.is_empty() || app.approval_shown().is_some() {
                    "Esc to interrupt · "
                } else {
                    ""
                }
            ),
            theme::accent(),
        ));
    }
    if !app.approvals.is_empty() {
        // Set aside with `o`: Esc brings it back.
        let back = if app.approval_shown().is_none() {
            "Esc to answer · "
        } else {
            ""
        };
        spans.push(Span::styled(
            format!(
                "{} approval{} pending · {back}",
                app.approvals.len(),
                if app.approvals.len() == 1 { "" } else { "s" }
            ),
            theme::warning(),
        ));
    }
    if status.plan_mode {
        spans.push(Span::styled("plan mode · ", theme::accent()));
    }
    let effort = status
        .effort
        .as_ref()
        .map_or(String::new(), |e| format!(" {e}"));
    spans.push(Span::styled(
        format!("{}{effort}", status.model),
        theme::bold(),
    ));
    spans.push(Span::styled(
        format!(
            " · {} · {} · ",
            status.approval.as_str(),
            status.sandbox.as_str()
        ),
        theme::dim(),
    ));
    spans.push(Span::styled(
        format!(
            "{}{}",
            gauge(view.context_tokens, status.context_window),
            context_text(view.context_tokens, status.context_window)
        ),
        theme::dim(),
    ));
    let branch = status
        .branch
        .as_ref()
        .map_or(String::new(), |b| format!(" ({b})"));
    spans.push(Span::styled(
        format!(" · {}{branch}", short_path(&status.cwd)),
        theme::dim(),
    ));
    Line::from(spans)
}

/// `line` cut to `width` cells, ending in `…` where something was cut off.
pub fn fit(line: Line<'static>, width: u16) -> Line<'static> {
    use unicode_width::UnicodeWidthStr;
    let width = width as usize;
    if line.width() <= width {
        return line;
    }
    let room = width.saturating_sub(1);
    let mut used = 0;
    let mut spans = Vec::new();
    for span in line.spans {
        let span_width = span.content.width();
        if used + span_width <= room {
            used += span_width;
            spans.push(span);
            continue;
        }
        let mut kept = String::new();
        for ch in span.content.chars() {
            let ch_width = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + ch_width > room {
                break;
            }
            used += ch_width;
            kept.push(ch);
        }
        spans.push(Span::styled(kept.trim_end().to_string(), span.style));
        break;
    }
    if width > 0 {
        spans.push(Span::styled("…", theme::dim()));
    }
    Line::from(spans)
}

/// `~/src/x` for a path under `$HOME`.
fn short_path(path: &Path) -> String {
    if let Some(home) = std::env::var_os("HOME") {
        if let Ok(rest) = path.strip_prefix(&home) {
            return format!("~/{}", rest.display());
        }
    }
    path.display().to_string()
}

/// The branch checked out in the repository holding `dir` (or the short commit when
/// detached), read from `.git/HEAD` without running git.
pub fn git_branch(dir: &Path) -> Option<String> {
    for ancestor in dir.ancestors() {
        let git = ancestor.join(".git");
        let head_file = if git.is_dir() {
            git.join("HEAD")
        } else if git.is_file() {
            // A worktree: `.git` is `gitdir: PATH`.
            let text = std::fs::read_to_string(&git).ok()?;
            let gitdir = text.strip_prefix("gitdir:")?.trim();
            ancestor.join(gitdir).join("HEAD")
        } else {
            continue;
        };
        let head = std::fs::read_to_string(head_file).ok()?;
        let head = head.trim();
        return Some(match head.strip_prefix("ref: refs/heads/") {
            Some(branch) => crate::sanitize::sanitize_line(branch),
            None => head.chars().take(7).collect(),
        });
    }
    None
}

#[cfg(test)]
#[path = "status_line_tests.rs"]
mod tests;
