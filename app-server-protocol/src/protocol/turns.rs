//! `turn/*`: a `Turn` and its status, and starting, steering and interrupting one.

use super::{AskForApproval, ThreadItem, UserInput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
