//! The wire types of the methods Troupe implements, in Codex's shapes (camelCase). Params are
//! parsed with these types, so a wrong type gets serde's message; results and notifications are
//! built from them, so the generated schema (`schema.rs`) is the wire.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub client_info: ClientInfo,
    #[serde(default)]
    pub capabilities: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    pub user_agent: String,
    pub codex_home: String,
    pub platform_family: String,
    pub platform_os: String,
}

/// `approvalPolicy` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    Untrusted,
    OnFailure,
    OnRequest,
    Never,
}

/// `sandbox` mode in thread params.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

/// `sandbox` policy in thread results (the resolved policy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SandboxPolicy {
    DangerFullAccess,
    #[serde(rename_all = "camelCase")]
    ReadOnly {
        network_access: bool,
    },
    #[serde(rename_all = "camelCase")]
    WorkspaceWrite {
        writable_roots: Vec<String>,
        network_access: bool,
        exclude_tmpdir_env_var: bool,
        exclude_slash_tmp: bool,
    },
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    Completed,
    Interrupted,
    Failed,
    InProgress,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnItemsView {
    NotLoaded,
    Summary,
    Full,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    pub message: String,
    pub additional_details: Option<String>,
    /// What kind of failure, when the runtime knows (Codex's `CodexErrorInfo`).
    pub codex_error_info: Option<CodexErrorInfo>,
}

/// Codex's classification of a failure, for the kinds Troupe's runtime tells apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CodexErrorInfo {
    ContextWindowExceeded,
    UsageLimitExceeded,
    Unauthorized,
    BadRequest,
    Other,
    #[serde(rename_all = "camelCase")]
    ResponseTooManyFailedAttempts {
        http_status_code: Option<u16>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub id: String,
    pub items: Vec<ThreadItem>,
    pub items_view: TurnItemsView,
    pub status: TurnStatus,
    pub error: Option<TurnError>,
    /// Unix seconds.
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub duration_ms: Option<i64>,
    /// The first turn of the chain of work that led to this one: every turn a client or the
    /// runtime starts is its own root.
    pub root_turn_id: Option<String>,
}

// A turn's items and what they hold: `protocol_items.rs`.
#[path = "protocol_items.rs"]
mod items;
pub use items::*;

/// `turn/start`: the input, and settings for this turn and the following ones (`null` or
/// absent keeps the thread's).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    pub thread_id: String,
    pub input: Vec<UserInput>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub sandbox_policy: Option<SandboxPolicyParam>,
    /// The reasoning effort sent as `reasoning.effort`.
    #[serde(default)]
    pub effort: Option<String>,
    /// A JSON Schema the final answer of this turn (only) must follow.
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// Deprecated in Codex: it selects no style there either, so it changes nothing.
    #[serde(default)]
    pub personality: Option<String>,
    /// Only `user` (Troupe asks the client); anything else is refused.
    #[serde(default)]
    pub approvals_reviewer: Option<String>,
    /// Refused when set: Troupe requests no reasoning summary mode of its own.
    #[serde(default)]
    pub summary: Option<String>,
    /// Refused when set: Troupe sends no service tier.
    #[serde(default)]
    pub service_tier: Option<String>,
    #[serde(default)]
    pub service_tier_for_turn: Option<String>,
}

/// A sandbox policy a client asks for (Codex's `SandboxPolicy`, with its defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SandboxPolicyParam {
    DangerFullAccess,
    #[serde(rename_all = "camelCase")]
    ReadOnly {
        #[serde(default)]
        network_access: bool,
    },
    /// Refused: Troupe always confines commands itself.
    #[serde(rename_all = "camelCase")]
    ExternalSandbox {
        #[serde(default)]
        network_access: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    WorkspaceWrite {
        #[serde(default)]
        writable_roots: Vec<String>,
        #[serde(default)]
        network_access: bool,
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
        #[serde(default)]
        exclude_slash_tmp: bool,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartResponse {
    pub turn: Turn,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    pub thread_id: String,
    pub expected_turn_id: String,
    pub input: Vec<UserInput>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    pub turn_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    pub thread_id: String,
    pub turn_id: String,
}

/// `{}`: the result of methods that answer nothing.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct EmptyResponse {}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub model: String,
    pub display_name: String,
    pub description: String,
    pub hidden: bool,
    pub is_default: bool,
    pub default_reasoning_effort: String,
    pub supported_reasoning_efforts: Vec<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListResponse {
    pub data: Vec<Model>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadParams {
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub include_layers: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadResponse {
    pub config: Value,
    pub origins: serde_json::Map<String, Value>,
    pub layers: Option<Vec<Value>>,
}

/// A command or file-change decision (the schema's two decision enums share these values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalDecision {
    Accept,
    AcceptForSession,
    Decline,
    Cancel,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResponse {
    pub decision: ApprovalDecision,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    /// `command` (Troupe asks about commands only); Codex's default, so optional there.
    #[serde(default)]
    pub kind: String,
    /// `local`: commands run on this machine.
    pub environment_id: Option<String>,
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub started_at_ms: i64,
    pub reason: Option<String>,
    pub command: Option<String>,
    pub cwd: Option<String>,
    pub command_actions: Option<Vec<CommandAction>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub started_at_ms: i64,
    pub reason: Option<String>,
    pub grant_root: Option<String>,
}

// Notifications and the fuzzy file search: `protocol_notifications.rs`.
#[path = "protocol_notifications.rs"]
mod notifications;
pub use notifications::*;

/// `troupe/lagged`: this client fell behind on a thread and missed notifications; call
/// `thread/resume` (or `thread/read`) to catch up from the rollout.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaggedNotification {
    pub thread_id: String,
    pub dropped: u64,
}

/// `troupe/thread/held`, right after `thread/resume`'s answer for a thread another process
/// holds: this server follows it (its history and what the holder records from now on) and
/// forwards steering, interrupts and approval answers there; it starts no turns of it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadHeldNotification {
    pub thread_id: String,
    pub held_by: HeldBy,
}

/// `thread/shellCommand`: the user's own command, run in the thread as the TUI's `!cmd`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadShellCommandParams {
    pub thread_id: String,
    pub command: String,
    /// Killed after this many milliseconds (an hour when absent or null; 0 at once).
    #[serde(default)]
    pub timeout_ms: Option<i64>,
}

/// `troupe/thread/lastTurns`: how the last turn of each thread ended, from the thread index,
/// for threads no client has open (their `status` is only `notLoaded`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastTurnsParams {
    /// At most 200 ids; unknown ones are left out of the answer.
    pub thread_ids: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastTurnsResponse {
    pub data: Vec<LastTurn>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastTurn {
    pub thread_id: String,
    pub status: LastTurnStatus,
    /// Another live process holds the thread open (a TUI, another app-server): it cannot be
    /// opened here, and `status` says whether a turn of it runs there now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<HeldBy>,
}

/// The process that holds a thread open.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeldBy {
    pub pid: u32,
    /// Its command line's first words (`troupe app-server …`), when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// The index's account of a thread's last turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LastTurnStatus {
    /// No turn has run yet.
    New,
    /// A process runs a turn of it now (this server or another): not merely holds it open.
    Running,
    Completed,
    Interrupted,
    Failed,
    /// The process died during the turn.
    Incomplete,
}

// `command/exec`, `fs/*` and `thread/turns/list`: `protocol_local.rs`.
#[path = "protocol_local.rs"]
mod local;
pub use local::*;
