//! The status line under the composer: model and effort, approval policy, sandbox mode,
//! context gauge, cwd and git branch, pending approvals, and the running turn's timer.

use crate::app::App;
use crate::cells::format_duration;
use crate::theme;
use ratatui::text::{Line, Span};
use std::path::Path;
use std::time::Instant;
use unicode_width::UnicodeWidthStr;

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

/// The status line's segments, most important first: [`fit`] drops them from the end when
/// the terminal is too narrow.
pub fn segments(app: &App, now: Instant) -> Vec<Line<'static>> {
    let status = &app.status;
    let view = app.current_view();
    let mut segments = Vec::new();
    // First, so a narrow terminal still shows whose transcript this is.
    if let Some(entry) = app.threads.get(app.current).filter(|t| t.is_agent) {
        segments.push(Line::styled(
            format!("viewing {}", crate::sanitize::sanitize_line(&entry.path)),
            theme::warning(),
        ));
    }
    if let Some(started) = view.turn_started {
        segments.push(Line::styled(
            format!(
                "● working {}",
                format_duration(now.duration_since(started).as_millis() as u64)
            ),
            theme::accent(),
        ));
        // Esc answers an approval set aside with `o` first.
        if app.approvals.is_empty() || app.approval_shown().is_some() {
            segments.push(Line::styled("Esc to interrupt", theme::accent()));
        }
    }
    if !app.approvals.is_empty() {
        segments.push(Line::styled(
            format!(
                "{} approval{} pending",
                app.approvals.len(),
                if app.approvals.len() == 1 { "" } else { "s" }
            ),
            theme::warning(),
        ));
        // Set aside with `o`: Esc brings it back.
        if app.approval_shown().is_none() {
            segments.push(Line::styled("Esc to answer", theme::warning()));
        }
    }
    if status.plan_mode {
        segments.push(Line::styled("plan mode", theme::accent()));
    }
    let effort = status
        .effort
        .as_ref()
        .map_or(String::new(), |e| format!(" {e}"));
    segments.push(Line::styled(
        format!("{}{effort}", status.model),
        theme::bold(),
    ));
    segments.push(Line::styled(status.approval.as_str(), theme::dim()));
    segments.push(Line::styled(status.sandbox.as_str(), theme::dim()));
    segments.push(Line::styled(
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
    segments.push(Line::styled(
        format!("{}{branch}", short_path(&status.cwd)),
        theme::dim(),
    ));
    segments
}

/// Between two segments.
const SEPARATOR: &str = " · ";
/// Where segments were dropped.
const ELLIPSIS: &str = "…";

/// The segments joined with ` · `, within `width` cells: when they do not all fit, whole
/// segments are dropped from the end (the least important) and the line ends in `…`, so no
/// word is cut. Only a first segment wider than the terminal is cut, at a word boundary
/// where there is one.
pub fn fit(segments: Vec<Line<'static>>, width: u16) -> Line<'static> {
    let width = usize::from(width);
    let separator = SEPARATOR.width();
    let total: usize = segments.iter().map(Line::width).sum::<usize>()
        + separator * segments.len().saturating_sub(1);
    let mut spans: Vec<Span<'static>> = Vec::new();
    if total <= width {
        for (i, segment) in segments.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(SEPARATOR, theme::dim()));
            }
            spans.extend(segment.spans);
        }
        return Line::from(spans);
    }
    if width == 0 {
        return Line::default();
    }
    let mut used = 0;
    let mut kept = 0;
    for segment in &segments {
        let before = if kept == 0 { 0 } else { separator };
        // Room must stay for ` · …` after it.
        let after = separator + ELLIPSIS.width();
        if used + before + segment.width() + after > width {
            break;
        }
        used += before + segment.width();
        kept += 1;
    }
    if kept == 0 {
        let first = segments.into_iter().next().unwrap_or_default();
        return cut(first, width.saturating_sub(ELLIPSIS.width()));
    }
    for (i, segment) in segments.into_iter().take(kept).enumerate() {
        if i > 0 {
            spans.push(Span::styled(SEPARATOR, theme::dim()));
        }
        spans.extend(segment.spans);
    }
    spans.push(Span::styled(SEPARATOR, theme::dim()));
    spans.push(Span::styled(ELLIPSIS, theme::dim()));
    Line::from(spans)
}

/// One segment cut to `room` cells (then `…`): at the last space that fits, or between
/// characters when the first word alone is wider.
fn cut(segment: Line<'static>, room: usize) -> Line<'static> {
    let style = segment.spans.first().map(|s| s.style).unwrap_or_default();
    let mut text = String::new();
    let mut used = 0;
    let mut whole = true;
    'spans: for span in &segment.spans {
        for ch in span.content.chars() {
            let ch_width = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
            if used + ch_width > room {
                whole = false;
                break 'spans;
            }
            used += ch_width;
            text.push(ch);
        }
    }
    let keep = match text.rfind(' ') {
        Some(space) if !whole => space,
        _ => text.len(),
    };
    Line::from(vec![
        Span::styled(text[..keep].trim_end().to_string(), style),
        Span::styled(ELLIPSIS, theme::dim()),
    ])
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
