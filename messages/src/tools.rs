//! Tool calls and their results, and the process-execution request a sandbox backend runs.

use crate::policy::PermissionProfile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A tool as advertised to the model in one request (frozen per sampling step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolSpec {
    /// A JSON function tool: arguments validated against `parameters` (JSON Schema).
    Function {
        name: String,
        description: String,
        strict: bool,
        parameters: serde_json::Value,
    },
    /// A freeform tool whose input follows a grammar (e.g. `apply_patch`).
    Custom {
        name: String,
        description: String,
        format: serde_json::Value,
    },
    /// The provider's own web search (`web_search = "live"|"cached"`), run by the provider:
    /// only the Responses wire has it. `external_web_access` false means cached results only.
    WebSearch {
        external_web_access: bool,
        search_content_types: Vec<String>,
    },
}

impl ToolSpec {
    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        match self {
            ToolSpec::Function { name, .. } | ToolSpec::Custom { name, .. } => name,
            ToolSpec::WebSearch { .. } => WEB_SEARCH_TOOL,
        }
    }
}

/// The name the provider's web search goes by.
/// What the model reads when the user says no (a frontend reading a rollout back tells a
/// refused command by it).
pub const REJECTED_BY_USER: &str = "exec command rejected by user";

pub const WEB_SEARCH_TOOL: &str = "web_search";

/// What the model sent for one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolPayload {
    /// Raw JSON text of a function call's arguments (not yet validated).
    Function { arguments: String },
    /// Raw text of a freeform call.
    Custom { input: String },
}

/// One tool call taken from a model response, ready to route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub call_id: String,
    pub tool_name: String,
    pub payload: ToolPayload,
}

impl ToolCall {
    /// Whether the model sent it as a custom (freeform) call, so its output must go back as
    /// a `custom_tool_call_output`.
    pub fn is_custom(&self) -> bool {
        matches!(self.payload, ToolPayload::Custom { .. })
    }
}

/// The result of one tool call, as it goes back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub call_id: String,
    /// Text the model reads.
    pub content: String,
    /// False when the call failed (bad arguments, unknown tool, crash, non-zero exit).
    pub success: bool,
    /// Whether the call came in as a custom (freeform) call; decides the output item type.
    pub custom: bool,
    /// Content parts that go back instead of `content` (an image `view_image` attached);
    /// `content` then only describes them (for events and hooks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<crate::items::ContentItem>,
}

/// A process to start, as handed to a sandbox backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecRequest {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// Environment of the child (the backend does not inherit anything else).
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
    /// Bytes of combined output kept (head + tail); the middle is dropped.
    pub max_output_bytes: usize,
    /// What the process may do; the `none` backend only accepts `Disabled`.
    pub profile: PermissionProfile,
    /// With the network off: the network proxy to bridge in (the `linux` backend runs the
    /// command through its one-shot helper then, never a zygote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_proxy: Option<crate::permissions::ProxyBridge>,
}

/// Bytes of one command's output streamed live (`ExecCommandOutputDelta`), both pipes
/// together: a command that floods output costs clients at most this much before its end.
pub const STREAMED_OUTPUT_PER_COMMAND: usize = 1024 * 1024;

/// Where a backend sends a running command's output as it comes (already coalesced, bounded
/// and decoded: see `troupe_sandbox::live_output`). In-process only.
#[derive(Clone)]
pub struct ExecOutputSink(
    pub std::sync::Arc<dyn Fn(crate::events::ExecOutputStream, String) + Send + Sync>,
);

impl ExecOutputSink {
    /// Hands one piece of output on.
    pub fn send(&self, stream: crate::events::ExecOutputStream, chunk: String) {
        (self.0)(stream, chunk);
    }
}

impl std::fmt::Debug for ExecOutputSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExecOutputSink")
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecResult {
    /// Exit code; `None` when killed by a signal (including our own timeout kill).
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// stdout and stderr interleaved in arrival order, truncated head+tail.
    pub aggregated_output: String,
    /// Bytes dropped from the middle of `aggregated_output`.
    pub truncated_bytes: u64,
    pub duration: Duration,
    pub timed_out: bool,
}

/// One file a patch changes, as shown to users.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Absolute path of the file (the source, for a move).
    pub path: PathBuf,
    pub kind: FileChangeKind,
    /// Where an update moves the file, if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_path: Option<PathBuf>,
    /// What changes, as Codex shows it per file: the new file's contents (add), the removed
    /// file's contents (delete), or the unified diff's hunks (update).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub diff: String,
}

/// What a patch does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    Add,
    Delete,
    Update,
}

/// One step of the model's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanItem {
    pub step: String,
    pub status: StepStatus,
}

/// Progress of a plan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    InProgress,
    Completed,
}

/// `text` cut to at most about `max_bytes`, keeping its head and tail (on char boundaries)
/// and saying how much was dropped.
pub fn truncate_middle(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let half = max_bytes / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!(
        "{}\n[… {} bytes omitted …]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}
