//! Wire items built from runtime data: commands, tool calls, file changes, plan steps, usage.

use crate::protocol::{
    CommandAction, FileUpdateChange, ItemStatus, PatchChangeKind, ThreadItem, TokenUsageBreakdown,
    TurnPlanStep,
};
use serde_json::Value;
use troupe_messages::tools::{FileChange, FileChangeKind, PlanItem, StepStatus};
use troupe_messages::usage::TokenUsage;

pub fn command_item(
    call_id: &str,
    command: &[String],
    cwd: &std::path::Path,
    status: ItemStatus,
) -> ThreadItem {
    let shown = shlex_join(command);
    ThreadItem::CommandExecution {
        id: call_id.to_string(),
        command: shown.clone(),
        cwd: cwd.display().to_string(),
        process_id: None,
        source: "agent".into(),
        status,
        command_actions: vec![CommandAction::Unknown { command: shown }],
        aggregated_output: None,
        exit_code: None,
        duration_ms: None,
    }
}

pub fn tool_item(
    call_id: &str,
    tool: &str,
    status: ItemStatus,
    success: Option<bool>,
) -> ThreadItem {
    ThreadItem::DynamicToolCall {
        id: call_id.to_string(),
        tool: tool.to_string(),
        arguments: Value::Null,
        status,
        success,
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
    // The runtime's events carry no per-file diff; `turn/diff/updated` has the turn's diff.
    FileUpdateChange {
        path: change.path.display().to_string(),
        kind,
        diff: String::new(),
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
