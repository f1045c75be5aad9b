//! `thread/*`: starting, resuming, forking, listing and reading threads, and the `Thread` they
//! return.

use super::{AskForApproval, SandboxMode, SandboxPolicy, Turn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartParams {
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub model_provider: Option<String>,
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub sandbox: Option<SandboxMode>,
    /// Extra `key = value` settings, as `-c` would give them.
    #[serde(default)]
    pub config: Option<serde_json::Map<String, Value>>,
}

/// What `thread/start`, `thread/resume` and `thread/fork` answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadOpenedResponse {
    pub thread: Thread,
    pub model: String,
    pub model_provider: String,
    pub cwd: String,
    /// `"untrusted"`, `"on-failure"`, `"on-request"`, `"never"` or `{"granular": {…}}`.
    #[schemars(with = "Value")]
    pub approval_policy: Value,
    pub approvals_reviewer: String,
    pub sandbox: SandboxPolicy,
    pub instruction_sources: Vec<String>,
    pub reasoning_effort: Option<String>,
    /// Always null: Troupe sends no service tier.
    pub service_tier: Option<String>,
    /// Troupe has no plugins: always empty.
    pub disabled_plugin_ids: Vec<String>,
}

/// What `thread/resume` answers: the opened thread and its collaboration mode.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeResponse {
    #[serde(flatten)]
    pub opened: ThreadOpenedResponse,
    pub collaboration_mode: Option<CollaborationMode>,
    /// Always null: the turns are in `thread.turns` (history mode `legacy`: Troupe has no
    /// paginated turn and item listing).
    pub items_backwards_cursor: Option<String>,
    pub turns_backwards_cursor: Option<String>,
}

/// Codex's `CollaborationMode`: `default` (do the work) or `plan`, with the model settings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollaborationMode {
    /// `default` or `plan`.
    pub mode: String,
    pub settings: CollaborationModeSettings,
}

/// Codex's collaboration-mode `Settings` (snake_case on the wire).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeSettings {
    pub model: String,
    pub reasoning_effort: Option<String>,
    pub developer_instructions: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadIdParams {
    pub thread_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeParams {
    pub thread_id: String,
    #[serde(default)]
    pub exclude_turns: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadForkParams {
    pub thread_id: String,
    /// Copy the history through this turn only.
    #[serde(default)]
    pub last_turn_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadParams {
    pub thread_id: String,
    #[serde(default)]
    pub include_turns: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadResponse {
    pub thread: Thread,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSetNameParams {
    pub thread_id: String,
    pub name: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    /// `true`: only archived threads; absent or `false`: only live ones.
    #[serde(default)]
    pub archived: Option<bool>,
    /// Only threads started in this directory.
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub model_providers: Option<Vec<String>>,
    /// Only threads whose preview or name contains this text.
    #[serde(default)]
    pub search_term: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListResponse {
    pub data: Vec<Thread>,
    pub next_cursor: Option<String>,
    /// Always null: Troupe lists newest first only (no `sortDirection` to reverse).
    pub backwards_cursor: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListResponse {
    pub data: Vec<String>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadUnsubscribeStatus {
    NotLoaded,
    NotSubscribed,
    Unsubscribed,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadUnsubscribeResponse {
    pub status: ThreadUnsubscribeStatus,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadUnarchiveResponse {
    pub thread: Thread,
}

/// A thread as clients see it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    pub id: String,
    pub session_id: String,
    pub path: Option<String>,
    pub cwd: String,
    pub status: ThreadStatus,
    pub turns: Vec<Turn>,
    pub model_provider: String,
    pub model: Option<String>,
    pub source: SessionSource,
    pub cli_version: String,
    pub ephemeral: bool,
    pub preview: String,
    pub name: Option<String>,
    pub project_id: Option<String>,
    pub forked_from_id: Option<String>,
    /// Set only for a sub-agent: the thread that spawned it.
    pub parent_thread_id: Option<String>,
    /// A sub-agent's readable name.
    pub agent_nickname: Option<String>,
    /// Always null: the rollout does not keep a sub-agent's role.
    pub agent_role: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
    /// Unix seconds, what a list is ordered by (the last update).
    pub recency_at: Option<i64>,
    /// The Git state of `cwd` when the thread started (no remote URL is recorded).
    pub git_info: Option<GitInfo>,
    /// `legacy`: every turn comes whole in `turns` (no paginated listing).
    pub history_mode: String,
    /// Always null: the rollout does not record which client started the thread.
    pub originator: Option<String>,
    /// The configured effort when loaded; null otherwise.
    pub reasoning_effort: Option<String>,
    /// Always null (Codex's analytics classification).
    pub thread_source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitInfo {
    pub sha: Option<String>,
    pub branch: Option<String>,
    pub origin_url: Option<String>,
}

/// Where a thread came from (Codex's `SessionSource`): `"appServer"`, or a sub-agent spawned
/// by another thread, whose `agent_path` is its task path (`/root/explore`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SessionSource {
    Named(String),
    SubAgent {
        #[serde(rename = "subAgent")]
        sub_agent: SubAgentSource,
    },
}

/// A sub-agent's origin (Codex's `SubAgentSource`; its fields are snake_case on the wire).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum SubAgentSource {
    #[serde(rename = "thread_spawn")]
    ThreadSpawn {
        parent_thread_id: String,
        depth: u32,
        agent_path: Option<String>,
        agent_nickname: Option<String>,
        agent_role: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadStatus {
    NotLoaded,
    Idle,
    SystemError,
    #[serde(rename_all = "camelCase")]
    Active {
        active_flags: Vec<ThreadActiveFlag>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadActiveFlag {
    WaitingOnApproval,
    WaitingOnUserInput,
}
