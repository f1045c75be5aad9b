//! Events: what a thread tells its subscribers (the event queue).

use crate::errors::TurnError;
use crate::ids::{ThreadId, TurnId};
use crate::items::ResponseItem;
use crate::permissions::SandboxRetry;
use crate::policy::{AskForApproval, SandboxMode};
use crate::tools::{FileChange, PlanItem};
use crate::usage::TokenUsage;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One event, tagged with the submission that caused it (empty for spontaneous ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: String,
    pub msg: EventMsg,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsg {
    /// The thread is ready; first event of every thread.
    SessionConfigured {
        thread_id: ThreadId,
        model: String,
        model_provider: String,
        cwd: PathBuf,
        approval_policy: AskForApproval,
        sandbox_mode: SandboxMode,
        rollout_path: PathBuf,
    },
    /// A turn began.
    TurnStarted { turn_id: TurnId },
    /// Input typed while the turn ran was added to it at a sampling boundary.
    InputInjected { turn_id: TurnId, text: String },
    /// A piece of the assistant's answer as it streams.
    AgentMessageDelta { delta: String },
    /// A finished assistant message.
    AgentMessage { message: String },
    /// A piece of reasoning summary as it streams.
    AgentReasoningDelta { delta: String },
    /// A finished reasoning summary.
    AgentReasoning { text: String },
    /// A command started.
    ExecCommandBegin {
        call_id: String,
        command: Vec<String>,
        cwd: PathBuf,
        /// The user's own command (`Op::RunUserShellCommand`), not the model's.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        user_shell: bool,
    },
    /// A command ended (or could not start).
    ExecCommandEnd {
        call_id: String,
        command: Vec<String>,
        exit_code: Option<i32>,
        aggregated_output: String,
        duration_ms: u64,
        timed_out: bool,
        /// The user's own command (`Op::RunUserShellCommand`), not the model's.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        user_shell: bool,
    },
    /// A command needs the user's decision before it runs; answer with `Op::ExecApproval`.
    ExecApprovalRequest {
        call_id: String,
        command: Vec<String>,
        cwd: PathBuf,
        /// Why it is asked (the model's justification, a rule, or a sandbox denial).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Set when the sandbox refused the command and this asks to run it again: what the
        /// retry adds. `Approved` (or `ApprovedForSession`) grants that for the session and
        /// retries in the sandbox; `ApprovedWithoutSandbox` retries with no sandbox.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox_retry: Option<SandboxRetry>,
    },
    /// A patch needs the user's decision before it is applied; answer with `Op::ExecApproval`
    /// (same decisions; "for session" covers each file).
    ApplyPatchApprovalRequest {
        call_id: String,
        files: Vec<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A tool call other than a command started.
    ToolCallBegin { call_id: String, tool_name: String },
    /// A tool call other than a command ended.
    ToolCallEnd {
        call_id: String,
        tool_name: String,
        success: bool,
        output: String,
    },
    /// `apply_patch` checked a patch and is about to write these changes.
    PatchApplyBegin {
        call_id: String,
        changes: Vec<FileChange>,
    },
    /// `apply_patch` finished: every change was written (`success`) or none was.
    PatchApplyEnd {
        call_id: String,
        changes: Vec<FileChange>,
        success: bool,
        /// What the model was told (summary or error).
        output: String,
    },
    /// The model's plan (from `update_plan`), whole each time.
    PlanUpdated {
        explanation: Option<String>,
        plan: Vec<PlanItem>,
    },
    /// The net unified diff of every file the turn changed so far (`git apply` format).
    TurnDiff { unified_diff: String },
    /// An item was appended to the history (and handed to the rollout).
    ItemRecorded { item: ResponseItem },
    /// The history was compacted into a summary.
    ContextCompacted {
        turn_id: TurnId,
        /// Estimated tokens before and after.
        tokens_before: u64,
        tokens_after: u64,
    },
    /// Token usage of the last response and the thread's running total.
    TokenCount { last: TokenUsage, total: TokenUsage },
    /// A model request failed and will be retried after `delay_ms`.
    StreamRetry {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
    },
    /// Something went wrong that the user should see; the turn may go on.
    Warning { message: String },
    /// Something failed; when `fatal`, the turn ended because of it.
    Error { error: TurnError, fatal: bool },
    /// The turn finished normally.
    TurnComplete {
        turn_id: TurnId,
        last_agent_message: Option<String>,
        usage: TokenUsage,
    },
    /// The turn was stopped before it finished.
    TurnAborted {
        turn_id: TurnId,
        reason: AbortReason,
    },
    /// A collaboration tool call (`spawn_agent`, `wait_agent`, …) started or ended.
    CollabToolCall {
        call_id: String,
        tool: String,
        sender_thread_id: ThreadId,
        /// The agents it addressed (a spawned agent once it exists).
        receiver_thread_ids: Vec<ThreadId>,
        /// The message or task it carried.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
        /// By thread id: what the call learned of each agent (a wait's results).
        #[serde(default)]
        agents_states: std::collections::BTreeMap<String, crate::agents::CollabAgentState>,
        status: crate::agents::CollabCallStatus,
    },
    /// Something a sub-agent of this thread's tree did, told to the root's subscribers with
    /// the agent's thread id and task path (never recorded: the child's rollout has it).
    AgentEvent {
        thread_id: ThreadId,
        task_path: String,
        msg: Box<EventMsg>,
    },
    /// The thread stopped; last event of a thread.
    ShutdownComplete,
    // Live command output (finish).
    /// A piece of a running one-shot command's output, as it is printed: coalesced (a few
    /// KiB or ~20 ms at a time), UTF-8 text (invalid bytes replaced; a chunk never splits a
    /// character), and bounded per command (`crate::tools::STREAMED_OUTPUT_PER_COMMAND`;
    /// past it nothing more is streamed). The command's `ExecCommandEnd` still carries its
    /// whole (head+tail) output. A delta: never recorded.
    ExecCommandOutputDelta {
        call_id: String,
        stream: ExecOutputStream,
        chunk: String,
    },
    // Hooks (lifecycle hooks area).
    /// A configured hook command started (`run_id` pairs it with its completion).
    HookStarted {
        run_id: String,
        event_name: crate::hooks::HookEventName,
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_name: Option<String>,
        /// The config file that declared the hook.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<std::path::PathBuf>,
    },
    /// A hook command finished: what it decided, and the reason or message it gave
    /// (for `failed`, why it counts as no decision).
    HookCompleted {
        run_id: String,
        event_name: crate::hooks::HookEventName,
        command: String,
        duration_ms: u64,
        decision: crate::hooks::HookDecision,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    // MCP tool calls (MCP area). Frontends that only need a name show them as
    // `ToolCallBegin`/`ToolCallEnd`; `exec --json` turns them into `mcp_tool_call` items.
    /// A call to an MCP tool was sent to its server (after any approval).
    McpToolCallBegin {
        call_id: String,
        /// The model-visible name (`mcp__<server>__<tool>`).
        tool_name: String,
        /// The configured server id and the tool's own name on that server.
        server: String,
        tool: String,
        arguments: serde_json::Value,
    },
    /// The call ended: `result` is the server's result as it sent it (`content`,
    /// `structuredContent`, `isError`), `error` why there is none (timeout, transport,
    /// protocol error). `output` is what the model was told.
    McpToolCallEnd {
        call_id: String,
        tool_name: String,
        server: String,
        tool: String,
        arguments: serde_json::Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<serde_json::Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        success: bool,
        output: String,
    },
    // Permission grants (request_permissions).
    /// The user (or a policy) granted extra permissions asked for by a `request_permissions`
    /// call: they widen the thread's sandbox for the rest of the turn or of the session.
    /// Recorded; a resumed thread takes back its session grants from these.
    PermissionsGranted {
        call_id: String,
        scope: crate::permissions::GrantScope,
        permissions: crate::permissions::RequestedPermissions,
    },
    /// The thread's goal changed (created, updated by a tool, its usage counted at a turn's
    /// end). `continuing`: the session starts a follow-up turn for it once this turn is
    /// complete. Recorded, so that resume restores the goal.
    GoalUpdated {
        goal: crate::goals::ThreadGoal,
        continuing: bool,
    },
    /// `request_user_input`: the model asks the person these questions (plan mode); answer
    /// with `Op::UserInputAnswer` for `call_id`. The call waits until then (or the turn ends).
    RequestUserInput {
        call_id: String,
        questions: Vec<crate::questions::UserQuestion>,
    },
}

/// Which pipe of a command a piece of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecOutputStream {
    Stdout,
    Stderr,
}

impl EventMsg {
    /// A streaming piece whose finished item follows: droppable for a slow subscriber, never
    /// persisted, forwarded without going through the turn's bookkeeping.
    pub fn is_delta(&self) -> bool {
        match self {
            EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ExecCommandOutputDelta { .. } => true,
            // A sub-agent's streamed output relayed to its root is a delta too.
            EventMsg::AgentEvent { msg, .. } => msg.is_delta(),
            _ => false,
        }
    }
}

/// Why a turn ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    Interrupted,
    Failed,
    Shutdown,
}
