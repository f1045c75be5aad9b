//! Unified diffs as coloured lines, split per file with their +/- counts.

use crate::sanitize::sanitize_line;
use crate::theme;
use ratatui::text::{Line, Span};

/// One file's section of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    /// The section's lines, header included.
    pub lines: Vec<String>,
}

/// Splits a `git diff`-style unified diff into its files.
pub fn split_files(unified: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    for line in unified.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest
                .split_whitespace()
                .last()
                .map(|p| p.trim_start_matches("b/").to_string())
                .unwrap_or_default();
            files.push(FileDiff {
                path,
                added: 0,
                removed: 0,
                lines: Vec::new(),
            });
        } else if files.is_empty() {
            files.push(FileDiff {
                path: String::new(),
                added: 0,
                removed: 0,
                lines: Vec::new(),
            });
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if line.starts_with('+') && !line.starts_with("+++") {
            file.added += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            file.removed += 1;
        }
        file.lines.push(line.to_string());
    }
    files
}

/// Whether `file` names `path` (the diff has repository-relative paths, events absolute).
pub fn names(file: &FileDiff, path: &str) -> bool {
    !file.path.is_empty() && (path == file.path || path.ends_with(&format!("/{}", file.path)))
}

/// How many rows the diff overlay draws for `unified` (its files' [`file_lines`]).
pub fn rendered_rows(unified: &str) -> usize {
    split_files(unified)
        .iter()
        .map(|f| file_lines(f).len())
        .sum()
}

/// A file's diff as coloured lines: a title with the counts, then the hunks.
pub fn file_lines(file: &FileDiff) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(sanitize_line(&file.path), theme::bold()),
        Span::raw(" ("),
        Span::styled(format!("+{}", file.added), theme::added()),
        Span::raw(" "),
        Span::styled(format!("-{}", file.removed), theme::removed()),
        Span::raw(")"),
    ])];
    for line in &file.lines {
        if line.starts_with("diff --git")
            || line.starts_with("index ")
            || line.starts_with("+++")
            || line.starts_with("---")
        {
            continue;
        }
        let style = if line.starts_with('+') {
            theme::added()
        } else if line.starts_with('-') {
            theme::removed()
        } else if line.starts_with("@@") {
            theme::hunk()
        } else {
            theme::dim()
        };
        lines.push(Line::styled(format!("  {}", sanitize_line(line)), style));
    }
    lines
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
