//! The typed shape of `config.toml` (the keys this build understands). Key names follow Codex
//! where the concept is the same, so a Codex config mostly carries over.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use troupe_messages::policy::{AskForApproval, CollaborationMode, SandboxBackendKind, SandboxMode};
use troupe_messages::settings::{
    ApplyPatchToolType, FsyncPolicy, ShellToolType, WebSearchMode, WireApi,
};

/// `config.toml` as written by the user; every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConfigToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub model_providers: BTreeMap<String, ProviderToml>,
    pub model_reasoning_effort: Option<ReasoningEffort>,
    pub model_context_window: Option<u64>,
    pub model_auto_compact_token_limit: Option<u64>,
    pub approval_policy: Option<AskForApproval>,
    pub sandbox_mode: Option<SandboxMode>,
    pub sandbox_workspace_write: Option<SandboxWorkspaceWriteToml>,
    /// Absolute paths no command may read, even after an escalation.
    pub sandbox_deny_read: Vec<PathBuf>,
    /// `auto` | `linux` | `landlock`.
    pub sandbox_backend: Option<SandboxBackendKind>,
    /// Replaces the built-in base instructions.
    pub instructions: Option<String>,
    /// Tool output kept for the model, in tokens (≈ 4 bytes each), head + tail.
    pub tool_output_token_limit: Option<usize>,
    /// Default timeout of shell commands.
    pub shell_timeout_ms: Option<u64>,
    /// When rollouts are fsynced: `every_item`, `tool_results` (default), `turn_boundaries`.
    pub rollout_fsync: Option<FsyncPolicy>,
    pub project_doc_max_bytes: Option<usize>,
    pub project_doc_fallback_filenames: Option<Vec<String>>,
    pub project_root_markers: Option<Vec<String>>,
    pub shell_environment_policy: Option<ShellEnvironmentPolicyToml>,
    /// Named sets of overrides; `profile` picks one.
    pub profiles: BTreeMap<String, ProfileToml>,
    pub profile: Option<String>,
    /// Per-project settings, keyed by absolute path.
    pub projects: BTreeMap<String, ProjectToml>,
    pub features: BTreeMap<String, bool>,
    /// `default` or `plan` (aliases as Codex: code, execute, pair_programming, custom).
    pub collaboration_mode: Option<CollaborationMode>,
    /// `[mcp_servers.<id>]` (see `mcp.rs`).
    pub mcp_servers: BTreeMap<String, crate::mcp::McpServerToml>,
    /// Where `troupe mcp login` keeps tokens: `file` or `auto` (both the file).
    pub mcp_oauth_credentials_store: Option<crate::mcp::OAuthCredentialsStoreToml>,
    /// `[[hooks.<Event>]]` groups (see `hooks.rs`); collected per layer, not merged.
    pub hooks: Option<crate::hooks::HooksToml>,
    /// Times Stop hooks may send one turn back to the model (default 3).
    pub max_stop_continuations: Option<u32>,
    /// `freeform` (grammar-constrained custom tool) or `function` (JSON `{"input"}`).
    pub apply_patch_tool_type: Option<ApplyPatchToolType>,
    /// `shell` or `exec_command` (PTY sessions with `write_stdin`).
    pub shell_tool_type: Option<ShellToolType>,
    /// Automatic compactions one turn may run before it fails (default 3).
    pub max_compactions_per_turn: Option<u32>,
    /// Model requests one turn may send before it fails (default 500).
    pub max_requests_per_turn: Option<u32>,
    /// `[agents]`: sub-agents (limits, roles).
    pub agents: Option<AgentsToml>,
    /// A developer message added after the permissions message of every new thread.
    pub developer_instructions: Option<String>,
    /// `low` | `medium` | `high`: sent as `text.verbosity` on the Responses wire.
    pub model_verbosity: Option<Verbosity>,
    /// argv of a program run when a turn completes, Codex's JSON payload appended.
    pub notify: Option<Vec<String>>,
    /// `[history]`: whether `exec` appends prompts to `$TROUPE_HOME/history.jsonl`.
    pub history: Option<HistoryToml>,
    /// `[network_proxy]`: with the network off, sandboxed commands reach approved hosts
    /// through the runtime's proxy (user config only).
    pub network_proxy: Option<NetworkProxyToml>,
    /// `disabled` (default) | `cached` | `live`: the provider's web search tool (Responses
    /// wire only).
    pub web_search: Option<WebSearchMode>,
    /// Follow-up turns an active goal may start in a row (default 10; 0 = none).
    pub max_goal_turns: Option<u32>,
    /// `[cluster]`: the NATS server of a worker pool (scale-out).
    pub cluster: Option<crate::cluster::ClusterToml>,
    /// `[checkpoints]`: the work tree recorded around each turn, for `troupe rewind`.
    pub checkpoints: Option<CheckpointsToml>,
}

/// `[checkpoints]`; an unknown key is an error.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointsToml {
    /// Record the writable roots around each turn (default true).
    pub enabled: Option<bool>,
    /// Prune checkpoints older than this many days (default 14).
    pub max_age_days: Option<u64>,
    /// Prune the store down to this many MB (default 2048).
    pub max_total_mb: Option<u64>,
    /// Leave out directories holding more than this many MB (default 256).
    pub max_dir_mb: Option<u64>,
}

/// `[network_proxy]`; an unknown key is an error.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkProxyToml {
    /// Run the proxy for `shell` commands of the `linux` sandbox whose network is off.
    pub enabled: bool,
    /// The port `HTTP_PROXY` names inside the sandbox (default 3128).
    pub port: Option<std::num::NonZeroU16>,
    /// Host names answered with a fixed address instead of DNS, e.g.
    /// `{ "api.internal.test" = "127.0.0.1" }`; a pinned address may be local.
    pub hosts: BTreeMap<String, std::net::IpAddr>,
    /// Host names the proxy may connect to when they resolve to the host's loopback, a
    /// private, link-local or other non-public address (refused for every other name).
    pub allow_local_names: Vec<String>,
}

/// `model_verbosity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verbosity {
    Low,
    Medium,
    High,
}

impl Verbosity {
    pub fn as_str(self) -> &'static str {
        match self {
            Verbosity::Low => "low",
            Verbosity::Medium => "medium",
            Verbosity::High => "high",
        }
    }
}

/// `[history]` (Codex's keys); an unknown key is an error.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistoryToml {
    /// `save-all` (default) or `none`.
    pub persistence: Option<HistoryPersistence>,
    /// Past this size the oldest entries are dropped (default: no cap).
    pub max_bytes: Option<u64>,
}

/// `history.persistence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HistoryPersistence {
    SaveAll,
    None,
}

/// `[agents]`; an unknown key is an error (a typo must not silently lift a limit).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentsToml {
    /// Offer the collaboration tools (default true).
    pub enabled: Option<bool>,
    /// Deepest level of a sub-agent (default 2).
    pub max_depth: Option<u32>,
    /// Open sub-agents per root thread (default 8).
    pub max_threads: Option<usize>,
    /// Commands running at once across all agents (default 4 × cores).
    pub max_concurrent_commands: Option<usize>,
    /// Tokens the whole agent tree may use before new spawns and follow-ups are refused.
    pub token_budget: Option<u64>,
    /// `[agents.roles.<name>]`, added to (or replacing) the built-in roles.
    pub roles: BTreeMap<String, AgentRoleToml>,
}

/// `[agents.roles.<name>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentRoleToml {
    pub description: Option<String>,
    pub model: Option<String>,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub sandbox_mode: Option<SandboxMode>,
    pub developer_instructions: Option<String>,
}

/// `[profiles.<name>]`: the keys a profile may set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProfileToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub model_reasoning_effort: Option<ReasoningEffort>,
    pub model_context_window: Option<u64>,
    pub model_auto_compact_token_limit: Option<u64>,
    pub approval_policy: Option<AskForApproval>,
    pub sandbox_mode: Option<SandboxMode>,
    pub instructions: Option<String>,
    pub tool_output_token_limit: Option<usize>,
    pub model_verbosity: Option<Verbosity>,
    pub developer_instructions: Option<String>,
}

/// `[projects."<path>"]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProjectToml {
    pub trust_level: Option<TrustLevel>,
}

/// Whether a project's own config and rules are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustLevel {
    Trusted,
    Untrusted,
}

/// `model_reasoning_effort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

/// `[sandbox_workspace_write]`; an unknown key is an error (a typo must not widen or
/// silently drop a sandbox setting).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxWorkspaceWriteToml {
    pub writable_roots: Vec<String>,
    pub network_access: bool,
    pub exclude_tmpdir_env_var: bool,
    pub exclude_slash_tmp: bool,
    /// Host Unix sockets (or directories of them) sandboxed commands may connect to with
    /// the network off, e.g. `["/run/user/1000/bus"]`.
    pub allow_unix_sockets: Vec<String>,
}

/// `[shell_environment_policy]`: which variables commands inherit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ShellEnvironmentPolicyToml {
    /// `all` (default), `core` or `none`; anything else is an error naming file, line, key.
    pub inherit: Option<ShellEnvInherit>,
    /// Keep the default exclusion of `*KEY*`, `*SECRET*`, `*TOKEN*` unless true.
    pub ignore_default_excludes: bool,
    /// Glob patterns of variables to drop.
    pub exclude: Vec<String>,
    /// Variables to set.
    pub set: BTreeMap<String, String>,
    /// When non-empty, only matching variables are kept.
    pub include_only: Vec<String>,
}

/// `shell_environment_policy.inherit`: which of troupe's variables commands start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShellEnvInherit {
    All,
    Core,
    None,
}

impl From<ShellEnvInherit> for troupe_messages::settings::ShellEnvInherit {
    fn from(value: ShellEnvInherit) -> Self {
        match value {
            ShellEnvInherit::All => Self::All,
            ShellEnvInherit::Core => Self::Core,
            ShellEnvInherit::None => Self::None,
        }
    }
}

/// `[model_providers.<id>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProviderToml {
    pub name: Option<String>,
    pub base_url: Option<String>,
    #[serde(deserialize_with = "supported_wire_api")]
    pub wire_api: Option<WireApi>,
    pub env_key: Option<String>,
    pub http_headers: BTreeMap<String, String>,
    pub request_max_retries: Option<u32>,
    pub stream_max_retries: Option<u32>,
    pub stream_idle_timeout_ms: Option<u64>,
    pub request_timeout_ms: Option<u64>,
    /// A response stream longer than this many bytes fails (default 64 MiB).
    pub stream_max_bytes: Option<u64>,
    /// A response stream lasting longer than this fails (default 30 min).
    pub stream_max_duration_ms: Option<u64>,
    /// Responses API over a WebSocket, falling back to SSE (default false).
    pub supports_websockets: Option<bool>,
}

/// The wire protocols the sampler speaks; anything else is an error naming the file, line,
/// key and these values.
const SUPPORTED_WIRE_APIS: &[&str] = &["responses", "chat", "anthropic"];

fn supported_wire_api<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<WireApi>, D::Error> {
    use serde::de::Error;
    let value = String::deserialize(deserializer)?;
    match value.as_str() {
        "responses" => Ok(Some(WireApi::Responses)),
        "chat" => Ok(Some(WireApi::Chat)),
        "anthropic" => Ok(Some(WireApi::Anthropic)),
        other => Err(D::Error::unknown_variant(other, SUPPORTED_WIRE_APIS)),
    }
}
