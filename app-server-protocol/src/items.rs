//! Wire items built from runtime data: commands, tool calls, file changes, plan steps, usage.

use crate::protocol::{
    CodexErrorInfo, CollabAgentState, CommandExecutionRequestApprovalParams,
    DynamicToolCallOutputContentItem, FileUpdateChange, ItemStatus, McpToolCallError,
    McpToolCallResult, PatchChangeKind, ThreadItem, TokenUsageBreakdown, TurnPlanStep,
};
use serde_json::Value;
use std::collections::BTreeMap;
use troupe_messages::agents::{AgentStatus, CollabCallStatus};
use troupe_messages::ids::ThreadId;
use troupe_messages::tools::{FileChange, FileChangeKind, PlanItem, StepStatus};
use troupe_messages::usage::TokenUsage;

pub fn command_item(
    call_id: &str,
    command: &[String],
    cwd: &std::path::Path,
    status: ItemStatus,
) -> ThreadItem {
    ThreadItem::CommandExecution {
        id: call_id.to_string(),
        command: shlex_join(command),
        cwd: cwd.display().to_string(),
        process_id: None,
        source: "agent".into(),
        status,
        command_actions: crate::command_actions::command_actions(command),
        aggregated_output: None,
        exit_code: None,
        duration_ms: None,
    }
}

/// `item/commandExecution/requestApproval`'s params for `command`; `reason` is what the
/// runtime said (a rule's justification, the model's), led by the command as Codex words it.
pub fn command_approval(
    thread_id: String,
    turn_id: String,
    call_id: &str,
    command: &[String],
    cwd: &std::path::Path,
    reason: Option<String>,
    now_ms: i64,
) -> CommandExecutionRequestApprovalParams {
    let shown = shlex_join(command);
    let reason = match reason {
        Some(reason) => format!("`{shown}` requires approval: {reason}"),
        None => format!("`{shown}` requires approval"),
    };
    CommandExecutionRequestApprovalParams {
        kind: "command".into(),
        environment_id: Some("local".into()),
        thread_id,
        turn_id,
        item_id: call_id.to_string(),
        started_at_ms: now_ms,
        reason: Some(reason),
        command: Some(shown),
        cwd: Some(cwd.display().to_string()),
        command_actions: Some(crate::command_actions::command_actions(command)),
    }
}

/// How an MCP call ended: its success, the server's result or why there is none, and its
/// duration.
pub struct ToolEnd<'a> {
    pub success: bool,
    pub result: Option<&'a Value>,
    pub error: Option<&'a str>,
    pub duration_ms: Option<i64>,
}

/// An MCP call; `end` once it ended.
pub fn mcp_item(
    call_id: &str,
    server: &str,
    tool: &str,
    arguments: &Value,
    end: Option<ToolEnd<'_>>,
) -> ThreadItem {
    let status = match &end {
        None => ItemStatus::InProgress,
        Some(end) if end.success => ItemStatus::Completed,
        Some(_) => ItemStatus::Failed,
    };
    let field = |result: &Value, name: &str| result.get(name).filter(|v| !v.is_null()).cloned();
    ThreadItem::McpToolCall {
        id: call_id.to_string(),
        server: server.to_string(),
        tool: tool.to_string(),
        arguments: arguments.clone(),
        status,
        result: end
            .as_ref()
            .and_then(|end| end.result)
            .map(|result| McpToolCallResult {
                content: result
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                structured_content: field(result, "structuredContent"),
                meta: field(result, "_meta"),
            }),
        error: end
            .as_ref()
            .and_then(|end| end.error)
            .map(|message| McpToolCallError {
                message: message.to_string(),
            }),
        duration_ms: end.and_then(|end| end.duration_ms),
    }
}

/// A tool call other than a command, a patch, an MCP call or a collaboration call; `end`
/// is its success, answer and duration once it ended.
pub fn tool_item(
    call_id: &str,
    tool: &str,
    arguments: Option<&Value>,
    end: Option<(bool, &str, Option<i64>)>,
) -> ThreadItem {
    let (status, success, content_items, duration_ms) = match end {
        None => (ItemStatus::InProgress, None, None, None),
        Some((success, output, duration_ms)) => (
            if success {
                ItemStatus::Completed
            } else {
                ItemStatus::Failed
            },
            Some(success),
            Some(vec![DynamicToolCallOutputContentItem::InputText {
                text: output.to_string(),
            }]),
            duration_ms,
        ),
    };
    ThreadItem::DynamicToolCall {
        id: call_id.to_string(),
        tool: tool.to_string(),
        arguments: arguments.cloned().unwrap_or(Value::Null),
        status,
        success,
        content_items,
        duration_ms,
    }
}

pub fn file_changes(changes: &[FileChange]) -> Vec<FileUpdateChange> {
    changes.iter().map(file_change).collect()
}

fn file_change(change: &FileChange) -> FileUpdateChange {
    let kind = match change.kind {
        FileChangeKind::Add => PatchChangeKind::Add,
        FileChangeKind::Delete => PatchChangeKind::Delete,
        FileChangeKind::Update => PatchChangeKind::Update {
            move_path: change.move_path.as_ref().map(|p| p.display().to_string()),
        },
    };
    FileUpdateChange {
        path: change.path.display().to_string(),
        kind,
        diff: change.diff.clone(),
    }
}

pub fn plan_step(item: &PlanItem) -> TurnPlanStep {
    let status = match item.status {
        StepStatus::Pending => "pending",
        StepStatus::InProgress => "inProgress",
        StepStatus::Completed => "completed",
    };
    TurnPlanStep {
        step: item.step.clone(),
        status: status.to_string(),
    }
}

pub fn breakdown(usage: &TokenUsage) -> TokenUsageBreakdown {
    let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    TokenUsageBreakdown {
        total_tokens: n(usage.total_tokens),
        input_tokens: n(usage.input_tokens),
        cached_input_tokens: n(usage.cached_input_tokens),
        output_tokens: n(usage.output_tokens),
        reasoning_output_tokens: n(usage.reasoning_output_tokens),
        cache_write_input_tokens: n(usage.cache_write_input_tokens),
    }
}

pub fn shlex_join(command: &[String]) -> String {
    command
        .iter()
        .map(|part| {
            if !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c))
            {
                part.clone()
            } else {
                format!("'{}'", part.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A collaboration tool call as Codex's `collabAgentToolCall` item.
pub fn collab_item(
    call_id: &str,
    tool: &str,
    sender: ThreadId,
    receivers: &[ThreadId],
    prompt: Option<&str>,
    states: &BTreeMap<String, troupe_messages::agents::CollabAgentState>,
    status: CollabCallStatus,
) -> ThreadItem {
    let status = match status {
        CollabCallStatus::InProgress => ItemStatus::InProgress,
        CollabCallStatus::Completed => ItemStatus::Completed,
        CollabCallStatus::Failed => ItemStatus::Failed,
    };
    ThreadItem::CollabAgentToolCall {
        id: call_id.to_string(),
        tool: collab_tool_name(tool),
        status,
        sender_thread_id: sender.to_string(),
        receiver_thread_ids: receivers.iter().map(ThreadId::to_string).collect(),
        prompt: prompt.map(str::to_string),
        model: None,
        reasoning_effort: None,
        agents_states: states
            .iter()
            .map(|(id, state)| {
                let wire = CollabAgentState {
                    status: collab_agent_status(state.status).to_string(),
                    message: state.message.clone(),
                };
                (id.clone(), wire)
            })
            .collect(),
    }
}

/// Codex's `CollabAgentTool` name of a Troupe collaboration tool.
fn collab_tool_name(tool: &str) -> String {
    match tool {
        "spawn_agent" => "spawnAgent",
        "send_message" => "sendMessage",
        "send_input" => "sendInput",
        "followup_task" => "followupTask",
        "wait_agent" => "wait",
        "interrupt_agent" => "interruptAgent",
        "list_agents" => "listAgents",
        "close_agent" => "closeAgent",
        "resume_agent" => "resumeAgent",
        other => other,
    }
    .to_string()
}

/// Codex's `CollabAgentStatus` of an agent's status.
fn collab_agent_status(status: AgentStatus) -> &'static str {
    match status {
        AgentStatus::Running => "running",
        AgentStatus::Completed => "completed",
        AgentStatus::Interrupted => "interrupted",
        AgentStatus::Failed => "errored",
        AgentStatus::Closed => "shutdown",
    }
}

/// Codex's kind of a failure the runtime reported.
pub fn error_info(error: &troupe_messages::errors::TurnError) -> CodexErrorInfo {
    use troupe_messages::errors::{ModelError, TurnError};
    match error {
        TurnError::Model(ModelError::ContextWindowExceeded { .. }) => {
            CodexErrorInfo::ContextWindowExceeded
        }
        TurnError::Model(ModelError::QuotaExceeded { .. }) => CodexErrorInfo::UsageLimitExceeded,
        TurnError::Model(ModelError::Unauthorized { .. }) => CodexErrorInfo::Unauthorized,
        TurnError::Model(ModelError::BadRequest { .. }) => CodexErrorInfo::BadRequest,
        TurnError::Model(ModelError::RetriesExhausted { .. }) => {
            CodexErrorInfo::ResponseTooManyFailedAttempts {
                http_status_code: None,
            }
        }
        TurnError::Model(
            ModelError::ResponseFailed { .. }
            | ModelError::LimitReached { .. }
            | ModelError::Internal { .. },
        )
        | TurnError::Internal { .. } => CodexErrorInfo::Other,
    }
}
