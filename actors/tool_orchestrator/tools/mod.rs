//! The built-in tools, one file per tool: its argument struct, its spec and its
//! `ToolHandler`. The top layer of the orchestrator: handlers use the contract, the policy
//! (approval gate, permissions, `exec_flow`) and the PTY sessions; nothing below names them.
//! To add a tool: a file here with its handler, and one `register` line in [`builtin`].

pub mod apply_patch;
pub mod create_goal;
pub mod exec_command;
pub mod exec_output;
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

use super::registry::ToolRegistry;
use std::sync::Arc;

/// A registry holding the built-in tools, with every `mcp__…` name routed to the MCP handler.
pub fn builtin() -> ToolRegistry {
    let mut registry = ToolRegistry::default();
    registry.register(Arc::new(shell::ShellHandler));
    registry.register(Arc::new(apply_patch::ApplyPatchHandler));
    registry.register(Arc::new(update_plan::PlanHandler));
    registry.register(Arc::new(exec_command::ExecCommandHandler));
    registry.register(Arc::new(write_stdin::WriteStdinHandler));
    for tool in mcp_resources::ResourceTool::ALL {
        let manager = registry.mcp().clone();
        registry.register(Arc::new(mcp_resources::McpResourceHandler {
            tool,
            manager,
        }));
    }
    registry.register(Arc::new(request_permissions::RequestPermissionsHandler));
    registry.register(Arc::new(view_image::ViewImageHandler));
    registry.register(Arc::new(get_goal::GetGoalHandler));
    registry.register(Arc::new(create_goal::CreateGoalHandler));
    registry.register(Arc::new(update_goal::UpdateGoalHandler));
    registry.register(Arc::new(web_search::WebSearchHandler));
    registry.register(Arc::new(request_user_input::RequestUserInputHandler));
    let manager = registry.mcp().clone();
    registry.register_prefix(
        troupe_mcp::names::PREFIX,
        Arc::new(mcp::McpHandler { manager }),
    );
    registry
}

impl ToolRegistry {
    /// The built-in tools ([`builtin`]); the name frontends and tests call.
    pub fn with_builtin_tools() -> Self {
        builtin()
    }
}
