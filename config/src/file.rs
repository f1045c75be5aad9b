//! The typed shape of `config.toml` (the keys this build understands).

use serde::Deserialize;
use std::collections::BTreeMap;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{ApplyPatchToolType, ShellToolType, WireApi};

/// `config.toml` as written by the user; every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConfigToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub model_providers: BTreeMap<String, ProviderToml>,
    pub approval_policy: Option<AskForApproval>,
    pub sandbox_mode: Option<SandboxMode>,
    /// Replaces the built-in base instructions.
    pub instructions: Option<String>,
    /// Bytes of tool output kept for the model (head + tail).
    pub tool_output_max_bytes: Option<usize>,
    /// Default timeout of shell commands.
    pub shell_timeout_ms: Option<u64>,
    /// `freeform` (grammar-constrained custom tool) or `function` (JSON `{"input"}`).
    pub apply_patch_tool_type: Option<ApplyPatchToolType>,
    /// `shell` or `exec_command` (PTY sessions with `write_stdin`).
    pub shell_tool_type: Option<ShellToolType>,
}

/// `[model_providers.<id>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProviderToml {
    pub name: Option<String>,
    pub base_url: Option<String>,
    pub wire_api: Option<WireApi>,
    pub env_key: Option<String>,
    pub http_headers: BTreeMap<String, String>,
    pub request_max_retries: Option<u32>,
    pub stream_max_retries: Option<u32>,
    pub stream_idle_timeout_ms: Option<u64>,
    pub request_timeout_ms: Option<u64>,
}
