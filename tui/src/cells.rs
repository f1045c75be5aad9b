//! Transcript cells: each turns one thing that happened into terminal lines. A finished cell
//! is written once into the terminal's scrollback; a live one (a streaming answer, a running
//! command) is drawn in the viewport until it finishes.

use crate::diff::{self, FileDiff};
use crate::markdown;
use crate::sanitize::{sanitize, sanitize_line};
use crate::theme;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use std::collections::VecDeque;
use troupe_messages::agents::CollabCallStatus;
use troupe_messages::tools::{FileChangeKind, PlanItem, StepStatus};
use troupe_messages::usage::TokenUsage;

/// Lines of a finished command's output shown in its cell (the tail).
pub const COMMAND_TAIL_LINES: usize = 5;
/// Lines (and bytes) of output a command cell keeps at most, however much arrives.
pub const OUTPUT_KEEP_LINES: usize = 200;
const OUTPUT_KEEP_BYTES: usize = 64 * 1024;
/// Characters of a streamed answer or reasoning kept while it streams.
pub const STREAM_KEEP_BYTES: usize = 256 * 1024;

/// The tail of a command's output, bounded in lines and bytes so a 10 MB output costs what
/// 200 lines do; `dropped` counts the lines that fell off the front.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputTail {
    lines: VecDeque<String>,
    /// A line still being written (no newline yet).
    partial: String,
    bytes: usize,
    pub dropped: usize,
}

impl OutputTail {
    /// Appends output as it arrives (a whole output, or a streamed chunk of it).
    pub fn push(&mut self, chunk: &str) {
        let mut pieces = chunk.split('\n').peekable();
        while let Some(piece) = pieces.next() {
            if self.partial.len() < OUTPUT_KEEP_BYTES {
                let room = OUTPUT_KEEP_BYTES - self.partial.len();
                let end = floor_char_boundary(piece, room.min(piece.len()));
                self.partial.push_str(&piece[..end]);
            }
            if pieces.peek().is_some() {
                let line = std::mem::take(&mut self.partial);
                self.bytes += line.len();
                self.lines.push_back(line);
                while self.lines.len() > OUTPUT_KEEP_LINES || self.bytes > OUTPUT_KEEP_BYTES {
                    let Some(old) = self.lines.pop_front() else {
                        break;
                    };
                    self.bytes -= old.len();
                    self.dropped += 1;
                }
            }
        }
    }

    /// Every kept line, the partial one last.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.lines
            .iter()
            .map(String::as_str)
            .chain((!self.partial.is_empty()).then_some(self.partial.as_str()))
    }

    pub fn len(&self) -> usize {
        self.lines.len() + usize::from(!self.partial.is_empty())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Characters of a collapsed reasoning cell's one line.
pub const REASONING_COLLAPSED_CHARS: usize = 72;

/// A reasoning summary collapsed to one line: its first non-empty line, cut, and how much is
/// hidden.
fn reasoning_summary_line(text: &str) -> Line<'static> {
    let clean = sanitize(text);
    let mut rows = clean.lines().filter(|l| !l.trim().is_empty());
    let first = rows.next().unwrap_or("").trim();
    // A summary's bold heading reads as plain text on one line.
    let first = first
        .strip_prefix("**")
        .and_then(|f| f.strip_suffix("**"))
        .unwrap_or(first);
    let hidden = rows.count();
    let mut shown: String = first.chars().take(REASONING_COLLAPSED_CHARS).collect();
    let cut = shown.len() < first.len();
    if cut {
        shown.push('…');
    }
    let more = match (hidden, cut) {
        (0, false) => String::new(),
        (0, true) => " (Ctrl+O expands)".to_string(),
        (n, _) => format!(" (+{n} lines, Ctrl+O expands)"),
    };
    Line::from(vec![
        Span::styled(format!("  thinking: {shown}"), theme::dim()),
        Span::styled(more, theme::dim()),
    ])
}

/// The largest char boundary of `s` at or below `at`.
pub fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

/// One entry of a thread's transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// What the user typed; `pending` while it waits for the model to see it (a steer).
    User {
        text: String,
        pending: bool,
    },
    /// The assistant's answer, markdown; `streaming` while deltas arrive.
    Assistant {
        markdown: String,
        streaming: bool,
    },
    /// A reasoning summary, dim; one line unless `expanded` (the transcript, Ctrl+O, shows it whole,
    /// `/reasoning` expands the following ones).
    Reasoning {
        text: String,
        expanded: bool,
    },
    Command(CommandCell),
    Patch(PatchCell),
    Plan {
        explanation: Option<String>,
        items: Vec<PlanItem>,
    },
    /// A tool other than a command (MCP, web search…).
    Tool {
        name: String,
        success: Option<bool>,
        output: String,
    },
    /// A collaboration call (`spawn_agent`, `wait_agent`…).
    Agent {
        tool: String,
        targets: Vec<String>,
        prompt: Option<String>,
        status: CollabCallStatus,
    },
    Notice {
        kind: NoticeKind,
        text: String,
    },
    /// The end of a turn: how it ended, its tokens and time.
    TurnFooter {
        outcome: String,
        usage: TokenUsage,
        elapsed_ms: u64,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct CommandCell {
    pub call_id: String,
    pub command: String,
    pub output: OutputTail,
    /// Set when it ended.
    pub exit_code: Option<Option<i32>>,
    pub duration_ms: u64,
    pub timed_out: bool,
    /// The user's own command (`!cmd`): shown as `! command`, not the model's `$`.
    pub user_shell: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PatchCell {
    pub call_id: String,
    pub files: Vec<(String, FileChangeKind)>,
    pub success: Option<bool>,
    pub output: String,
    /// The sections of the turn diff for these files, once it arrived.
    pub diffs: Vec<FileDiff>,
}

impl Cell {
    /// Whether it is still changing (drawn in the viewport, not yet in the scrollback).
    pub fn is_live(&self) -> bool {
        match self {
            Cell::Assistant { streaming, .. } => *streaming,
            Cell::Command(c) => c.exit_code.is_none(),
            Cell::Patch(p) => p.success.is_none(),
            Cell::User { pending, .. } => *pending,
            Cell::Tool { success, .. } => success.is_none(),
            Cell::Agent { status, .. } => *status == CollabCallStatus::InProgress,
            Cell::Reasoning { .. }
            | Cell::Plan { .. }
            | Cell::Notice { .. }
            | Cell::TurnFooter { .. } => false,
        }
    }

    /// The cell's lines, not wrapped (see [`Cell::height`]); a blank line ends each cell.
    pub fn lines(&self) -> Vec<Line<'static>> {
        let mut lines = match self {
            Cell::User { text, pending } => {
                let mut lines = Vec::new();
                for (i, line) in sanitize(text).split('\n').enumerate() {
                    let marker = if i == 0 { "› " } else { "  " };
                    lines.push(Line::from(vec![
                        Span::styled(marker, theme::user()),
                        Span::styled(line.to_string(), theme::bold()),
                    ]));
                }
                if *pending {
                    lines.push(Line::styled(
                        "  (queued: sent at the next step of the turn)",
                        theme::dim(),
                    ));
                }
                lines
            }
            Cell::Assistant { markdown, .. } => {
                let mut lines = vec![Line::styled("• troupe", theme::accent())];
                lines.extend(markdown::render(markdown));
                lines
            }
            Cell::Reasoning {
                text,
                expanded: true,
            } => sanitize(text)
                .split('\n')
                .map(|l| Line::styled(format!("  {l}"), theme::dim()))
                .collect(),
            Cell::Reasoning {
                text,
                expanded: false,
            } => vec![reasoning_summary_line(text)],
            Cell::Command(command) => command.lines(),
            Cell::Patch(patch) => patch.lines(),
            Cell::Plan { explanation, items } => {
                let mut lines = vec![Line::styled("• plan", theme::accent())];
                if let Some(text) = explanation {
                    lines.push(Line::styled(
                        format!("  {}", sanitize_line(text)),
                        theme::dim(),
                    ));
                }
                for item in items {
                    let (mark, style) = match item.status {
                        StepStatus::Completed => ("  ✔ ", theme::success()),
                        StepStatus::InProgress => ("  ▸ ", theme::accent()),
                        StepStatus::Pending => ("  □ ", theme::dim()),
                    };
                    lines.push(Line::from(vec![
                        Span::styled(mark, style),
                        Span::raw(sanitize_line(&item.step)),
                    ]));
                }
                lines
            }
            Cell::Tool {
                name,
                success,
                output,
            } => {
                let status = match success {
                    None => Span::styled("running", theme::dim()),
                    Some(true) => Span::styled("ok", theme::success()),
                    Some(false) => Span::styled("failed", theme::failure()),
                };
                let mut lines = vec![Line::from(vec![
                    Span::styled("• tool ", theme::accent()),
                    Span::styled(sanitize_line(name), theme::bold()),
                    Span::raw(" "),
                    status,
                ])];
                let mut tail = OutputTail::default();
                tail.push(output);
                lines.extend(tail_lines(&tail, COMMAND_TAIL_LINES));
                lines
            }
            Cell::Agent {
                tool,
                targets,
                prompt,
                status,
            } => {
                let status = match status {
                    CollabCallStatus::InProgress => Span::styled("…", theme::dim()),
                    CollabCallStatus::Completed => Span::styled("done", theme::success()),
                    CollabCallStatus::Failed => Span::styled("failed", theme::failure()),
                };
                let mut head = vec![
                    Span::styled("• agents ", theme::accent()),
                    Span::styled(sanitize_line(tool), theme::bold()),
                ];
                if !targets.is_empty() {
                    head.push(Span::raw(format!(
                        " → {}",
                        sanitize_line(&targets.join(", "))
                    )));
                }
                head.push(Span::raw(" "));
                head.push(status);
                let mut lines = vec![Line::from(head)];
                if let Some(prompt) = prompt {
                    let first = prompt.lines().next().unwrap_or("");
                    lines.push(Line::styled(
                        format!("  {}", sanitize_line(first)),
                        theme::dim(),
                    ));
                }
                lines
            }
            Cell::Notice { kind, text } => {
                let (label, style) = match kind {
                    NoticeKind::Info => ("• ", theme::dim()),
                    NoticeKind::Warning => ("⚠ ", theme::warning()),
                    NoticeKind::Error => ("✖ ", theme::failure()),
                };
                sanitize(text)
                    .split('\n')
                    .enumerate()
                    .map(|(i, l)| {
                        Line::styled(format!("{}{l}", if i == 0 { label } else { "  " }), style)
                    })
                    .collect()
            }
            Cell::TurnFooter {
                outcome,
                usage,
                elapsed_ms,
            } => vec![Line::styled(
                format!(
                    "─ {outcome} · {} tokens ({} in, {} out) · {} ─",
                    usage.total_tokens,
                    usage.input_tokens,
                    usage.output_tokens,
                    format_duration(*elapsed_ms)
                ),
                theme::dim(),
            )],
        };
        lines.push(Line::default());
        lines
    }

    /// Rows the cell takes at `width` once wrapped.
    pub fn height(&self, width: u16) -> u16 {
        let rows = Paragraph::new(self.lines())
            .wrap(Wrap { trim: false })
            .line_count(width.max(1));
        u16::try_from(rows).unwrap_or(u16::MAX)
    }
}

impl CommandCell {
    pub fn new(call_id: String, command: String) -> Self {
        Self {
            call_id,
            command,
            output: OutputTail::default(),
            exit_code: None,
            duration_ms: 0,
            timed_out: false,
            user_shell: false,
        }
    }

    /// The user's own command: `command` is what they typed after `!`.
    pub fn user_shell(call_id: String, command: String) -> Self {
        Self {
            user_shell: true,
            ..Self::new(call_id, command)
        }
    }

    fn lines(&self) -> Vec<Line<'static>> {
        let status = match self.exit_code {
            None => Span::styled("running", theme::dim()),
            Some(Some(0)) => Span::styled("✔ exit 0", theme::success()),
            Some(Some(code)) => Span::styled(format!("✖ exit {code}"), theme::failure()),
            Some(None) if self.timed_out => Span::styled("✖ timed out", theme::failure()),
            Some(None) => Span::styled("✖ killed", theme::failure()),
        };
        let mut head = vec![
            Span::styled(
                if self.user_shell { "• ! " } else { "• $ " },
                theme::accent(),
            ),
            Span::styled(sanitize_line(&self.command), theme::bold()),
            Span::raw("  "),
            status,
        ];
        if self.exit_code.is_some() {
            head.push(Span::styled(
                format!(" · {}", format_duration(self.duration_ms)),
                theme::dim(),
            ));
        }
        let mut lines = vec![Line::from(head)];
        lines.extend(tail_lines(&self.output, COMMAND_TAIL_LINES));
        lines
    }
}

/// The last `count` lines of `tail`, indented, with a note of how many are hidden: the
/// transcript (Ctrl+O) shows every line kept; lines past the cell's bound were not kept.
pub(crate) fn tail_lines(tail: &OutputTail, count: usize) -> Vec<Line<'static>> {
    let total = tail.len();
    let folded = total.saturating_sub(count);
    let mut lines = Vec::new();
    let note = match (folded, tail.dropped) {
        (0, 0) => None,
        (0, dropped) => Some(format!("  … {dropped} earlier lines not kept")),
        (folded, 0) => Some(format!("  + {folded} lines (Ctrl+O to expand)")),
        (folded, dropped) => Some(format!(
            "  + {folded} lines (Ctrl+O to expand), {dropped} earlier not kept"
        )),
    };
    if let Some(note) = note {
        lines.push(Line::styled(note, theme::dim()));
    }
    for line in tail.lines().skip(total.saturating_sub(count)) {
        lines.push(Line::styled(
            format!("  │ {}", sanitize_line(line)),
            theme::dim(),
        ));
    }
    lines
}

impl PatchCell {
    fn lines(&self) -> Vec<Line<'static>> {
        let status = match self.success {
            None => Span::styled("applying", theme::dim()),
            Some(true) => Span::styled("applied", theme::success()),
            Some(false) => Span::styled("failed", theme::failure()),
        };
        let mut lines = vec![Line::from(vec![
            Span::styled("• patch ", theme::accent()),
            status,
        ])];
        for (path, kind) in &self.files {
            let verb = match kind {
                FileChangeKind::Add => "added",
                FileChangeKind::Delete => "deleted",
                FileChangeKind::Update => "updated",
            };
            match self.diffs.iter().find(|d| diff::names(d, path)) {
                Some(file) => {
                    let mut file_lines = diff::file_lines(file);
                    if let Some(first) = file_lines.first_mut() {
                        first.spans.insert(0, Span::raw(format!("  {verb} ")));
                    }
                    lines.extend(file_lines);
                }
                None => lines.push(Line::raw(format!("  {verb} {}", sanitize_line(path)))),
            }
        }
        if self.success == Some(false) {
            lines.push(Line::styled(
                format!("  {}", sanitize_line(&self.output)),
                theme::failure(),
            ));
        }
        lines
    }
}

/// `1.2s`, `3m 04s`.
pub fn format_duration(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
#[path = "cells_tests.rs"]
mod tests;
