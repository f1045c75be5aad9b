//! MCP client of Troupe: the configured servers a runtime connects to, their tools under
//! model-visible names, and calls with deadlines and bounded results. No actors: the
//! [`manager::McpManager`] is a service shared by every thread of one runtime.

pub mod approval;
pub mod connection;
pub mod manager;
pub mod names;
pub mod oauth;
pub mod output;
pub mod resources;

/// The MCP library itself, for the server side (`troupe mcp-server`) and tests.
pub use rmcp;

pub use manager::{McpManager, McpTool, McpToolset, Prepared};

/// Why a server or a call failed; each says which server.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start `{command}`: {reason}")]
    Spawn {
        server: String,
        command: String,
        reason: String,
    },
    #[error("the server did not complete the MCP handshake: {reason}")]
    Handshake { server: String, reason: String },
    #[error("the server did not start within {seconds} s (startup_timeout_sec)")]
    StartupTimeout { server: String, seconds: f64 },
    #[error("the server requires OAuth and no token is stored: run `troupe mcp login {server}`")]
    NotLoggedIn { server: String },
    #[error(
        "the server refused the stored OAuth token and it could not be refreshed: run \
         `troupe mcp login {server}` again"
    )]
    LoginExpired { server: String },
    #[error("invalid configuration: {reason}")]
    Config { server: String, reason: String },
    #[error("the call to MCP server `{server}` failed: {reason}")]
    Call { server: String, reason: String },
    #[error("MCP server `{server}` did not answer within {seconds} s (tool_timeout_sec)")]
    CallTimeout { server: String, seconds: f64 },
}
