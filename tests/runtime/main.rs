//! The integration tests of `troupe-actors` in one binary: the runtime driven through its API
//! against the mock model, no `troupe` binary. Each module is one scenario file
//! (`runtime_context::…`); run one with `cargo test -p troupe-actors --test runtime runtime_tools::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod runtime_agent_crash;
mod runtime_context;
mod runtime_durability;
mod runtime_limits;
mod runtime_open;
mod runtime_supervision;
mod runtime_tools;
