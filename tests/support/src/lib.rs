//! What the integration tests and benchmarks share: the mock-model harness around the real
//! `troupe` binary, helpers for driving the actor runtime directly, and the one
//! `SessionSettings` they all start from.

// Test set-up reports a broken environment by panicking, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;
pub mod nats;
pub mod oauth_server;
pub mod runtime;
pub mod settings;
pub mod tls;

pub use harness::{
    collect_jsonl, json_lines, stderr, stdout, tool_outputs, troupe_exe, Harness, KEY_VAR,
};
