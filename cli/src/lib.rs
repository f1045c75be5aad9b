//! What the command-line frontends (`troupe exec`, the servers, the worker, the thread
//! commands) share: the session flags and how they resolve into settings, the stop signals,
//! checked terminal-safe output, the thread index commands, the prompt history, project trust,
//! stored keys and provider model checks.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

pub mod features;
pub mod history;
pub mod login;
pub mod models;
pub mod output;
pub mod session_flags;
pub mod signals;
pub mod threads;
pub mod threads_tree;
pub mod trust;
