//! Resolved settings a thread runs under: what config loading produces, frozen per turn.
//!
//! Never holds secrets: the API key is read from the environment variable named by
//! `env_key` at request time, so it cannot reach a rollout or a log.

use crate::policy::{AskForApproval, SandboxMode};
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
    /// OpenAI Chat Completions streaming (local/OSS servers).
    Chat,
}

/// A model provider (`model_providers.<id>` in config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderSettings {
    /// The key under `model_providers`.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// e.g. `https://api.openai.com/v1`; `/responses` is appended.
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
}

/// Everything a session needs to run turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSettings {
    pub model: String,
    pub provider: ProviderSettings,
    pub cwd: PathBuf,
    pub approval_policy: AskForApproval,
    pub sandbox_mode: SandboxMode,
    /// Sent as the `instructions` field of every request.
    pub base_instructions: String,
    /// Tool output kept for the model, head + tail, in bytes.
    pub tool_output_max_bytes: usize,
    /// Shell commands without `timeout_ms` are killed after this.
    pub default_shell_timeout_ms: u64,
    /// Where rollouts and state live (`$TROUPE_HOME`).
    pub troupe_home: PathBuf,
    /// Which variants of the built-in tools the model is offered.
    #[serde(default)]
    pub tools: ToolSettings,
}

/// Choices between variants of built-in tools (`apply_patch_tool_type`, `shell_tool_type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSettings {
    pub apply_patch: ApplyPatchToolType,
    pub shell: ShellToolType,
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
