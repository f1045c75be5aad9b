//! Resolved settings a thread runs under: what config loading produces, frozen per turn.
//!
//! Never holds secrets: the API key is read from the environment variable named by
//! `env_key` at request time, so it cannot reach a rollout or a log.

use crate::policy::{AskForApproval, CollaborationMode, SandboxMode, SandboxSettings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireApi {
    /// OpenAI Responses API streamed over SSE.
    #[default]
    Responses,
    /// OpenAI Chat Completions streaming (local/OSS servers: Ollama, vLLM, llama.cpp, LM Studio).
    Chat,
    /// Anthropic Messages API streaming.
    Anthropic,
}

/// A model provider (`model_providers.<id>` in config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSettings {
    /// The key under `model_providers`.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// e.g. `https://api.openai.com/v1`; the wire's path (`/responses`, `/chat/completions`,
    /// `/messages`) is appended.
    pub base_url: String,
    pub wire_api: WireApi,
    /// Environment variable holding the API key; none means no auth header.
    pub env_key: Option<String>,
    /// Extra HTTP headers sent with every request.
    pub http_headers: BTreeMap<String, String>,
    /// Retries of a request that failed with 429/5xx or could not connect.
    pub request_max_retries: u32,
    /// Retries of a stream that dropped or went idle.
    pub stream_max_retries: u32,
    /// A stream with no event for this long is treated as dropped.
    pub stream_idle_timeout_ms: u64,
    /// Connect + response-headers timeout of one request.
    pub request_timeout_ms: u64,
    /// A response stream longer than this (bytes on the wire) fails as a stream error.
    #[serde(default = "default_stream_max_bytes")]
    pub stream_max_bytes: u64,
    /// A response stream lasting longer than this fails as a stream error.
    #[serde(default = "default_stream_max_duration_ms")]
    pub stream_max_duration_ms: u64,
    /// Responses API over a WebSocket (`supports_websockets = true`), SSE when the upgrade
    /// fails. Only the `responses` wire has it.
    #[serde(default)]
    pub supports_websockets: bool,
    /// Answer from a recorded rollout instead of a server (`troupe debug replay`); set by
    /// that command only, never read from config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplaySource>,
}

/// The recording the built-in `replay` provider answers from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySource {
    /// The rollout whose model outputs answer the requests.
    pub rollout: PathBuf,
    /// Fail on the first request whose instructions or input differ from the recording.
    pub check: bool,
}

/// Default bound of one response stream, in bytes (64 MiB).
pub const DEFAULT_STREAM_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Default bound of one response stream, in milliseconds (30 min).
pub const DEFAULT_STREAM_MAX_DURATION_MS: u64 = 30 * 60 * 1000;
/// Default cap of automatic compactions in one turn.
pub const DEFAULT_MAX_COMPACTIONS_PER_TURN: u32 = 3;
/// Default cap of model requests (sampling and compaction) in one turn.
pub const DEFAULT_MAX_REQUESTS_PER_TURN: u32 = 500;

fn default_stream_max_bytes() -> u64 {
    DEFAULT_STREAM_MAX_BYTES
}

fn default_stream_max_duration_ms() -> u64 {
    DEFAULT_STREAM_MAX_DURATION_MS
}

fn default_max_compactions_per_turn() -> u32 {
    DEFAULT_MAX_COMPACTIONS_PER_TURN
}

fn default_max_requests_per_turn() -> u32 {
    DEFAULT_MAX_REQUESTS_PER_TURN
}

/// The settings a frontend sets for the next turn and the ones after (`Op::UpdateTurnSettings`):
/// whole values, resolved by the frontend through the same configuration checks as a new
/// thread's settings, so the session only copies them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnSettingsUpdate {
    pub model: String,
    pub approval_policy: AskForApproval,
    pub sandbox_mode: SandboxMode,
    /// `[sandbox_workspace_write]`'s roots, network and tmp choices.
    pub writable_roots: Vec<PathBuf>,
    pub network_access: bool,
    pub exclude_tmpdir_env_var: bool,
    pub exclude_slash_tmp: bool,
    pub cwd: PathBuf,
    pub reasoning_effort: Option<String>,
    /// The JSON Schema the next turn's final answer must follow; that turn only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema_next_turn: Option<serde_json::Value>,
}

/// Everything a session needs to run turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSettings {
    pub model: String,
    pub provider: ProviderSettings,
    pub cwd: PathBuf,
    pub approval_policy: AskForApproval,
    pub sandbox_mode: SandboxMode,
    /// Writable roots, network, deny-read and backend of the sandbox.
    #[serde(default)]
    pub sandbox: SandboxSettings,
    /// Sent as the `instructions` field of every request.
    pub base_instructions: String,
    /// Tool output kept for the model, head + tail, in bytes.
    pub tool_output_max_bytes: usize,
    /// Shell commands without `timeout_ms` are killed after this.
    pub default_shell_timeout_ms: u64,
    /// Where rollouts and state live (`$TROUPE_HOME`).
    pub troupe_home: PathBuf,
    /// How the model-visible context is assembled and kept within the window.
    pub context: ContextSettings,
    /// When the rollout is fsynced (`rollout_fsync` in config).
    #[serde(default)]
    pub rollout_fsync: FsyncPolicy,
    /// Which variants of the built-in tools the model is offered.
    #[serde(default)]
    pub tools: ToolSettings,
    /// Sub-agents: `[agents]` and this thread's place in its tree.
    #[serde(default)]
    pub agents: crate::agents::AgentSettings,
    /// `notify`: argv of a program run (not waited for) when a turn completes, with Codex's
    /// JSON payload appended as the last argument; empty for none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<String>,
    /// Where the rollouts of this thread (and its sub-agents) go instead of
    /// `$TROUPE_HOME/sessions`: `exec --ephemeral` points it at a private temporary directory
    /// removed at exit, so nothing of the run stays on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_dir: Option<PathBuf>,
    /// Lifecycle hooks (`[hooks]`, `hooks.json`, `max_stop_continuations`).
    #[serde(default)]
    pub hooks: crate::hooks::HookSettings,
    /// MCP servers (`[mcp_servers.<id>]`), by id; disabled ones are kept for `troupe mcp`.
    /// Not written to rollouts: their `env` and headers may hold secrets, and a resumed
    /// thread takes them from the config of the moment.
    #[serde(default, skip_serializing)]
    pub mcp_servers: std::collections::BTreeMap<String, crate::mcp::McpServerSettings>,
    /// `[cluster]`: the worker pool `spawn_agent {placement}` may place sub-agents on. Not
    /// written to rollouts (it may hold a password); a resumed thread takes it from the
    /// config of the moment.
    #[serde(default, skip_serializing)]
    pub cluster: crate::cluster::ClusterConfig,
    /// `[checkpoints]`: the state of the writable roots recorded before and after each turn
    /// (`troupe rewind`). Not written to rollouts: a resumed thread takes the config of
    /// the moment.
    #[serde(default, skip_serializing)]
    pub checkpoints: CheckpointSettings,
}

/// `[checkpoints]`: what `troupe rewind` can take the work tree back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointSettings {
    /// Record the writable roots before and after every turn.
    pub enabled: bool,
    /// Checkpoints older than this are pruned (each thread's newest two stay).
    pub max_age_days: u64,
    /// The store is pruned, oldest checkpoints first, down to this many MB.
    pub max_total_mb: u64,
    /// A directory holding more than this many MB is left out of checkpoints (and of
    /// rewinds), like the files `.gitignore` ignores.
    pub max_dir_mb: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_age_days: 14,
            max_total_mb: 2048,
            max_dir_mb: 256,
        }
    }
}

/// Choices between variants of built-in tools (`apply_patch_tool_type`, `shell_tool_type`),
/// the provider's web search, and how far a goal may carry a thread by itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSettings {
    pub apply_patch: ApplyPatchToolType,
    pub shell: ShellToolType,
    /// Offer `request_permissions` (feature `request_permissions_tool`, off by default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub request_permissions: bool,
    /// `web_search`: off by default.
    #[serde(default)]
    pub web_search: WebSearchMode,
    /// `max_goal_turns`: automatic follow-up turns an active goal may start in a row
    /// (0 = none; set by config, 0 only when a rollout predates the key).
    #[serde(default)]
    pub max_goal_turns: u32,
}

/// `web_search`: whether the provider's web search tool is offered, and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WebSearchMode {
    #[default]
    Disabled,
    /// Results from the provider's cache only (live under danger-full-access, as Codex).
    Cached,
    /// Live results from the web.
    Live,
}

impl WebSearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            WebSearchMode::Disabled => "disabled",
            WebSearchMode::Cached => "cached",
            WebSearchMode::Live => "live",
        }
    }
}

/// How `apply_patch` is offered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyPatchToolType {
    /// A custom tool whose input is the patch itself, constrained by the patch grammar.
    #[default]
    Freeform,
    /// A JSON function tool with one argument, `{"input": "<patch>"}`.
    Function,
}

/// How commands are offered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShellToolType {
    /// `shell`: argv in, output out, one call per command.
    #[default]
    Shell,
    /// `exec_command` + `write_stdin`: commands in a PTY that may keep running between calls.
    ExecCommand,
}

/// When a thread's rollout is forced to disk. Every line is written (survives a killed
/// process) as soon as it is recorded; this decides what also survives a power loss.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsyncPolicy {
    /// After every line.
    EveryItem,
    /// At every turn boundary and after every tool result.
    #[default]
    ToolResults,
    /// At turn boundaries only.
    TurnBoundaries,
}

/// Settings of context assembly: instructions discovery, window, compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextSettings {
    /// Shared byte budget of the AGENTS.md chain; 0 disables project docs.
    pub project_doc_max_bytes: usize,
    /// Names tried after `AGENTS.override.md` and `AGENTS.md` in each directory.
    pub project_doc_fallback_filenames: Vec<String>,
    /// Files or folders whose presence marks the project root (default `.git`).
    pub project_root_markers: Vec<String>,
    /// Tokens the model accepts; from config or the built-in table.
    pub model_context_window: Option<u64>,
    /// Compact when the thread's tokens reach this.
    pub auto_compact_token_limit: Option<u64>,
    /// `model_reasoning_effort`, sent as `reasoning.effort` when set.
    pub reasoning_effort: Option<String>,
    /// Environment of spawned commands.
    pub shell_env: ShellEnvPolicy,
    /// `default` or `plan`.
    #[serde(default)]
    pub collaboration_mode: CollaborationMode,
    /// Automatic compactions one turn may run before it fails.
    #[serde(default = "default_max_compactions_per_turn")]
    pub max_compactions_per_turn: u32,
    /// Model requests one turn may send (each retried per the provider's policy).
    #[serde(default = "default_max_requests_per_turn")]
    pub max_requests_per_turn: u32,
    /// `developer_instructions`: a developer message placed after the permissions message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_instructions: Option<String>,
    /// `model_verbosity` (`low`, `medium`, `high`): sent as `text.verbosity` (Responses wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_verbosity: Option<String>,
    /// `exec --output-schema`: a JSON Schema sent as the response's `text.format`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
}

/// `shell_environment_policy.inherit`: which of troupe's variables commands start from.
/// Written as its lowercase name (the text rollouts already hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShellEnvInherit {
    /// Every variable (the default; an empty string in older rollouts meant the same).
    #[default]
    #[serde(alias = "")]
    All,
    /// HOME, PATH, USER, SHELL, LANG, TERM, TMPDIR and a few more.
    Core,
    /// None at all.
    None,
}

/// Which environment variables commands inherit (`shell_environment_policy`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ShellEnvPolicy {
    /// Which of troupe's variables commands start from.
    pub inherit: ShellEnvInherit,
    /// Keep variables whose names contain KEY, SECRET or TOKEN.
    pub ignore_default_excludes: bool,
    /// Glob patterns (`*` wildcard, case-insensitive) of variables to drop.
    pub exclude: Vec<String>,
    /// Variables to set after filtering.
    pub set: BTreeMap<String, String>,
    /// When non-empty, only variables matching one of these globs are kept.
    pub include_only: Vec<String>,
}
