//! `--color always|never|auto` for `exec`'s human output on stderr (`auto`: when stderr is a
//! terminal and `NO_COLOR` is unset or empty). Section labels are bold, outcomes green or
//! red, warnings yellow; `--json` output never has colour.

use std::io::IsTerminal;

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorArg {
    Always,
    Never,
    #[default]
    Auto,
}

impl ColorArg {
    /// Whether stderr gets colour.
    pub fn enabled(self) -> bool {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        resolve(self, std::io::stderr().is_terminal(), no_color)
    }
}

/// `--color` against the terminal and `NO_COLOR` (which only `auto` honours, as Codex).
pub fn resolve(choice: ColorArg, terminal: bool, no_color: bool) -> bool {
    match choice {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => terminal && !no_color,
    }
}

const BOLD: &str = "\x1b[1m";
const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const MAGENTA: &str = "\x1b[35m";
const RESET: &str = "\x1b[0m";

/// Labels that open a block of human output.
const LABELS: &[&str] = &[
    "user",
    "exec",
    "troupe",
    "thinking",
    "tokens used",
    "file update:",
];

/// `text` (one block of human output) with its first line styled.
pub fn paint(text: &str) -> String {
    let (first, rest) = match text.split_once('\n') {
        Some((first, rest)) => (first, Some(rest)),
        None => (text, None),
    };
    let style = if LABELS.contains(&first) {
        if first == "exec" {
            MAGENTA
        } else {
            BOLD
        }
    } else if first.starts_with("succeeded") {
        GREEN
    } else if first.starts_with("exited")
        || first.starts_with("failed")
        || first.starts_with("timed out")
        || first.starts_with("ERROR")
        || first.starts_with("turn aborted")
        || first.starts_with("file update failed")
    {
        RED
    } else if first.starts_with("warning") {
        YELLOW
    } else {
        return text.to_string();
    };
    match rest {
        Some(rest) => format!("{style}{first}{RESET}\n{rest}"),
        None => format!("{style}{first}{RESET}"),
    }
}

#[cfg(test)]
#[path = "color_tests.rs"]
mod tests;
