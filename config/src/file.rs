//! The typed shape of `config.toml` (the keys this build understands).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use troupe_messages::policy::{AskForApproval, SandboxBackendKind, SandboxMode};
use troupe_messages::settings::WireApi;

/// `config.toml` as written by the user; every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConfigToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub model_providers: BTreeMap<String, ProviderToml>,
    pub approval_policy: Option<AskForApproval>,
    pub sandbox_mode: Option<SandboxMode>,
    /// `[sandbox_workspace_write]`, as in Codex.
    pub sandbox_workspace_write: WorkspaceWriteToml,
    /// Absolute paths no command may read, even after an escalation.
    pub sandbox_deny_read: Vec<PathBuf>,
    /// `auto` | `linux` | `landlock`.
    pub sandbox_backend: Option<SandboxBackendKind>,
    /// Replaces the built-in base instructions.
    pub instructions: Option<String>,
    /// Bytes of tool output kept for the model (head + tail).
    pub tool_output_max_bytes: Option<usize>,
    /// Default timeout of shell commands.
    pub shell_timeout_ms: Option<u64>,
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

/// `[sandbox_workspace_write]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceWriteToml {
    pub writable_roots: Vec<PathBuf>,
    pub network_access: bool,
    pub exclude_tmpdir_env_var: bool,
    pub exclude_slash_tmp: bool,
}
