//! The built-in tools, one file per tool: its argument struct, its spec and its
//! `ToolHandler`. They are registered in `ToolRegistry::with_builtin_tools` (`../registry.rs`);
//! what they share (the approval gate, the sandbox choice, the PTY sessions) stays beside the
//! orchestrator.

pub mod apply_patch;
pub mod create_goal;
pub mod exec_command;
pub mod get_goal;
pub mod goal_report;
pub mod local_image;
pub mod mcp;
pub mod mcp_resources;
pub mod request_permissions;
pub mod request_user_input;
pub mod shell;
pub mod update_goal;
pub mod update_plan;
pub mod view_image;
pub mod web_search;
pub mod write_stdin;
