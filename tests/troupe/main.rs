//! The integration tests of the `troupe` package in one binary (one link step instead of one
//! per file): each module is one scenario file, so a test is named `exec_flow::…`,
//! `sandbox_escape::…`. Run one file with `cargo test -p troupe --test troupe exec_flow::`.
//! A new scenario file goes here as a `mod` line; shared set-up lives in `troupe-test-support`.
#![allow(
    clippy::print_stderr,
    clippy::too_many_lines,
    reason = "scenarios print what they saw and read top to bottom"
)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod app_server_support;
mod approval_support;
mod cluster_support;
mod escape_support;
mod hooks_support;
mod mcp_support;
mod subagents_support;

mod app_server;
mod app_server_agents;
mod app_server_clients;
mod app_server_codex;
mod app_server_conformance;
mod app_server_fields;
mod app_server_held;
mod app_server_items;
mod app_server_live;
mod app_server_local;
mod app_server_overrides;
mod app_server_revert;
mod app_server_shell;
mod app_server_threads;
mod app_server_token;
mod approval_flow;
mod approval_tools;
mod cli_bad_input;
mod cli_stdout;
mod cluster_agents;
mod cluster_agents_restart;
mod cluster_exec;
mod cluster_failover;
mod cluster_git;
mod cluster_nkeys;
mod cluster_security;
mod cluster_tls;
mod context_flow;
mod exec_bad_input;
mod exec_disk_full;
mod exec_faults;
mod exec_flow;
mod exec_runaway;
mod exec_sessions_end;
mod exec_signals;
mod home_modes;
mod home_secrets;
mod hooks_tools;
mod hooks_turns;
mod interrupt_output;
mod kill_battery;
mod mcp_cli;
mod mcp_client;
mod mcp_items;
mod mcp_oauth;
mod mcp_server;
mod network_proxy;
mod parity_config;
mod parity_exec;
mod patch_confinement;
mod patch_corners;
mod permissions_request;
mod plant_attacks;
mod providers_bad_input;
mod providers_local;
mod providers_replay;
mod providers_wires;
mod queue_flow;
mod review_app_server;
mod review_flow;
mod rewind;
mod rules_attacks;
mod sandbox_edges;
mod sandbox_escape;
mod sandbox_landlock;
mod sandbox_retry;
mod sandbox_zygote;
mod servers_shutdown;
mod startup_errors;
mod subagents;
mod subagents_limits;
mod subagents_writers;
mod supervision_scenario;
mod terminal_escapes;
mod threads_crash;
mod threads_resume;
mod threads_roundtrip;
mod tools_flow;
mod tools_goals;
mod tools_questions;
mod tools_view_image;
mod tools_web_search;
mod tui_agents_panel;
mod tui_features;
mod tui_flow;
mod tui_keys;
mod tui_resize;
mod tui_resume;
mod tui_review;
mod tui_rewind;
mod tui_settings;
mod tui_shell_approvals;
mod tui_start;
mod tui_tmux;
mod tui_transcript;
mod web_page;
mod web_page_trees;
mod worktree_git_dir;

/// Points the runtime at the small sandbox helper cargo built for this package. The choice is
/// process-wide and the first call wins, so every test in this binary makes the same one.
pub fn use_sandbox_helper() {
    troupe_sandbox::probe::set_helper_exe(env!("CARGO_BIN_EXE_troupe-sandbox").into());
}
