//! MCP servers a thread may use (`[mcp_servers.<id>]` in config), resolved.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The file under `$TROUPE_HOME` where `troupe mcp login` keeps OAuth tokens (Codex's name).
pub const MCP_CREDENTIALS_FILE: &str = ".credentials.json";
/// Codex's default wait for a server to start and list its tools.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 10_000;
/// Codex's default deadline of one tool call.
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 60_000;

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerSettings {
    pub transport: McpTransport,
    /// `false` leaves the server out (it stays in the config and in `troupe mcp list`).
    pub enabled: bool,
    pub startup_timeout_ms: u64,
    pub tool_timeout_ms: u64,
    /// `default_tools_approval_mode`.
    pub default_tools_approval_mode: McpToolApproval,
    /// `[mcp_servers.<id>.tools.<tool>] approval_mode`, by raw tool name.
    pub tool_approval_modes: BTreeMap<String, McpToolApproval>,
    /// `enabled_tools`: when set, only these raw tool names are offered.
    pub enabled_tools: Option<Vec<String>>,
    /// `disabled_tools`: removed after `enabled_tools`.
    pub disabled_tools: Vec<String>,
    /// Where `troupe mcp login` keeps OAuth tokens (`$TROUPE_HOME/.credentials.json`); a
    /// streamable-HTTP server without `bearer_token_env_var` uses the ones stored for it.
    /// `None` when the settings were built without a home (then no stored token is used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_credentials_file: Option<PathBuf>,
}

impl McpServerSettings {
    /// The approval mode of one raw tool name (its override, else the server's default).
    pub fn approval_mode_for(&self, tool: &str) -> McpToolApproval {
        self.tool_approval_modes
            .get(tool)
            .copied()
            .unwrap_or(self.default_tools_approval_mode)
    }

    /// Whether the filters let this raw tool name through.
    pub fn allows_tool(&self, tool: &str) -> bool {
        let enabled = self
            .enabled_tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == tool));
        enabled && !self.disabled_tools.iter().any(|name| name == tool)
    }
}

/// How Troupe reaches a server. Ordered so that a connection can be keyed by it: two
/// threads with the same id and transport share one process.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum McpTransport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Set in the child's environment.
        env: BTreeMap<String, String>,
        /// Variables copied from Troupe's own environment (the child gets no other).
        env_vars: Vec<String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    StreamableHttp {
        url: String,
        bearer_token_env_var: Option<String>,
        http_headers: BTreeMap<String, String>,
        /// Header name → variable whose value is sent.
        env_http_headers: BTreeMap<String, String>,
    },
}

/// `default_tools_approval_mode` / `approval_mode`: when an MCP tool call asks the user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpToolApproval {
    /// Ask unless the tool says it is read-only, or the session runs with full access and
    /// `approval_policy = "never"`.
    #[default]
    Auto,
    /// Always ask.
    Prompt,
    /// Ask unless the tool says it is read-only.
    Writes,
    /// Never ask.
    Approve,
}
