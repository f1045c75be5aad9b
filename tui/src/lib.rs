//! `troupe`'s interactive terminal UI: an inline ratatui viewport at the bottom of the
//! terminal (composer, status line, live cells, overlays) over the in-process runtime, with
//! finished transcript cells written into the terminal's own scrollback.
//!
//! Layout: [`app`] is the pure state machine (keys and events in, [`app::Action`]s out),
//! [`thread_view`] one thread's transcript, [`cells`] how each kind of entry looks,
//! [`ui`] the viewport's drawing, [`run`] the terminal and the event loop.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

pub mod app;
pub mod cells;
pub mod completion;
pub mod composer;
pub mod diff;
pub mod farewell;
pub mod highlight;
pub mod markdown;
pub mod questions;
pub mod replay;
pub mod resume_picker;
pub mod run;
pub mod sanitize;
pub mod screen;
pub mod shortcuts;
pub mod slash;
pub mod status_line;
pub mod terminal;
pub mod theme;
pub mod thread_view;
pub mod threads_panel;
pub mod transcript;
pub mod trust_screen;
pub mod ui;
pub mod ui_approval;
pub mod ui_pickers;

pub use run::{run, run_starting, Launch, LaunchStarting, Starting, TuiError, TuiExit};

/// A command as one shell-quoted line.
pub fn command_line(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod snapshot_tests;

#[cfg(test)]
#[path = "snapshot_review_tests.rs"]
mod snapshot_review_tests;

#[cfg(test)]
#[path = "snapshot_rewind_tests.rs"]
mod snapshot_rewind_tests;
