//! Whether an MCP tool call asks the user first (Codex's `default_tools_approval_mode`
//! semantics). Annotations come from the server, which is not trusted to lower the bar
//! except by saying a tool only reads.

use rmcp::model::ToolAnnotations;
use troupe_messages::mcp::McpToolApproval;
use troupe_messages::policy::{AskForApproval, SandboxMode};

/// True when the call must be approved before it runs.
pub fn needs_approval(
    mode: McpToolApproval,
    annotations: Option<&ToolAnnotations>,
    approval_policy: AskForApproval,
    sandbox_mode: SandboxMode,
) -> bool {
    let read_only = annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
    match mode {
        McpToolApproval::Approve => false,
        McpToolApproval::Prompt => true,
        McpToolApproval::Writes => !read_only,
        McpToolApproval::Auto => {
            let full_access = approval_policy == AskForApproval::Never
                && sandbox_mode == SandboxMode::DangerFullAccess;
            !full_access && auto_requires_approval(annotations)
        }
    }
}

/// `auto`: a destructive tool asks; a read-only one does not; otherwise it asks unless the
/// server says it is neither destructive nor open-world (missing hints count against it).
fn auto_requires_approval(annotations: Option<&ToolAnnotations>) -> bool {
    let destructive = annotations.and_then(|a| a.destructive_hint);
    if destructive == Some(true) {
        return true;
    }
    if annotations.and_then(|a| a.read_only_hint).unwrap_or(false) {
        return false;
    }
    destructive.unwrap_or(true) || annotations.and_then(|a| a.open_world_hint).unwrap_or(true)
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
