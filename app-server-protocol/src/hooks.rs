//! Hook runs on the wire: `HookStarted` / `HookCompleted` → Codex's `hook/started` /
//! `hook/completed` notifications, each carrying a `HookRunSummary` (the run's id, event,
//! status, timing and what the hook said).
//!
//! Troupe's hooks are commands run synchronously (the flow waits for their verdict), so
//! `handlerType` is always `command` and `executionMode` `sync`; `SessionStart` runs belong
//! to the thread (`scope: thread`), every other event to the running turn.

use crate::translate::{notify, Out};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use troupe_messages::hooks::{HookDecision, HookEventName as RuntimeEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookEventName {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    Stop,
}

impl From<RuntimeEvent> for HookEventName {
    fn from(event: RuntimeEvent) -> Self {
        match event {
            RuntimeEvent::SessionStart => Self::SessionStart,
            RuntimeEvent::UserPromptSubmit => Self::UserPromptSubmit,
            RuntimeEvent::PreToolUse => Self::PreToolUse,
            RuntimeEvent::PostToolUse => Self::PostToolUse,
            RuntimeEvent::PermissionRequest => Self::PermissionRequest,
            RuntimeEvent::Stop => Self::Stop,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookHandlerType {
    Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookExecutionMode {
    Sync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookScope {
    Thread,
    Turn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookRunStatus {
    Running,
    Completed,
    Failed,
    Blocked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookOutputEntryKind {
    Feedback,
    Context,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookOutputEntry {
    pub kind: HookOutputEntryKind,
    pub text: String,
}

/// One hook run as Codex reports it. Times are Unix seconds, as every other timestamp of
/// Codex's v2 wire (`Turn.startedAt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookRunSummary {
    pub id: String,
    pub event_name: HookEventName,
    pub handler_type: HookHandlerType,
    pub execution_mode: HookExecutionMode,
    pub scope: HookScope,
    /// The config file that declared the hook.
    pub source_path: String,
    /// The order runs started in on this thread (from 0).
    pub display_order: i64,
    pub status: HookRunStatus,
    pub started_at: i64,
    pub completed_at: Option<i64>,
    pub duration_ms: Option<i64>,
    /// What the hook said: its reason, added context, or why it failed.
    pub entries: Vec<HookOutputEntry>,
}

/// `hook/started` and `hook/completed`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookNotification {
    pub thread_id: String,
    /// The running turn (none for a `SessionStart` run, which belongs to the thread).
    pub turn_id: Option<String>,
    pub run: HookRunSummary,
}

/// The runs of one thread that have started and not completed.
#[derive(Default)]
pub struct HookRuns {
    running: HashMap<String, HookRunSummary>,
    next_order: i64,
}

/// A `HookStarted` event.
pub struct Started<'a> {
    pub run_id: &'a str,
    pub event: RuntimeEvent,
    pub source: Option<&'a Path>,
}

/// A `HookCompleted` event.
pub struct Completed<'a> {
    pub run_id: &'a str,
    pub event: RuntimeEvent,
    pub duration_ms: u64,
    pub decision: HookDecision,
    pub message: Option<&'a str>,
}

impl HookRuns {
    pub fn started(
        &mut self,
        thread_id: &str,
        turn_id: Option<&str>,
        run: Started<'_>,
        now_ms: i64,
    ) -> Out {
        let summary = HookRunSummary {
            id: run.run_id.to_string(),
            event_name: run.event.into(),
            handler_type: HookHandlerType::Command,
            execution_mode: HookExecutionMode::Sync,
            scope: scope(run.event),
            source_path: run
                .source
                .map(|path| path.display().to_string())
                .unwrap_or_default(),
            display_order: self.next_order,
            status: HookRunStatus::Running,
            started_at: now_ms / 1000,
            completed_at: None,
            duration_ms: None,
            entries: Vec::new(),
        };
        self.next_order += 1;
        self.running.insert(summary.id.clone(), summary.clone());
        notification("hook/started", thread_id, turn_id, summary)
    }

    pub fn completed(
        &mut self,
        thread_id: &str,
        turn_id: Option<&str>,
        run: Completed<'_>,
        now_ms: i64,
    ) -> Out {
        let duration_ms = i64::try_from(run.duration_ms).unwrap_or(i64::MAX);
        // A completion whose start this translator never saw (a rollout replayed from its
        // middle): its start is worked out from its duration.
        let mut summary = self.running.remove(run.run_id).unwrap_or_else(|| {
            let order = self.next_order;
            self.next_order += 1;
            HookRunSummary {
                id: run.run_id.to_string(),
                event_name: run.event.into(),
                handler_type: HookHandlerType::Command,
                execution_mode: HookExecutionMode::Sync,
                scope: scope(run.event),
                source_path: String::new(),
                display_order: order,
                status: HookRunStatus::Running,
                started_at: now_ms.saturating_sub(duration_ms) / 1000,
                completed_at: None,
                duration_ms: None,
                entries: Vec::new(),
            }
        });
        let (status, kind) = match run.decision {
            HookDecision::None | HookDecision::Allow => {
                (HookRunStatus::Completed, HookOutputEntryKind::Context)
            }
            HookDecision::Block | HookDecision::Deny => {
                (HookRunStatus::Blocked, HookOutputEntryKind::Feedback)
            }
            HookDecision::Failed => (HookRunStatus::Failed, HookOutputEntryKind::Error),
        };
        summary.status = status;
        summary.completed_at = Some(now_ms / 1000);
        summary.duration_ms = Some(duration_ms);
        summary.entries = run
            .message
            .filter(|text| !text.is_empty())
            .map(|text| HookOutputEntry {
                kind,
                text: text.to_string(),
            })
            .into_iter()
            .collect();
        notification("hook/completed", thread_id, turn_id, summary)
    }
}

fn scope(event: RuntimeEvent) -> HookScope {
    match event {
        RuntimeEvent::SessionStart => HookScope::Thread,
        RuntimeEvent::UserPromptSubmit
        | RuntimeEvent::PreToolUse
        | RuntimeEvent::PostToolUse
        | RuntimeEvent::PermissionRequest
        | RuntimeEvent::Stop => HookScope::Turn,
    }
}

fn notification(
    method: &'static str,
    thread_id: &str,
    turn_id: Option<&str>,
    run: HookRunSummary,
) -> Out {
    let turn_id = match run.scope {
        HookScope::Thread => None,
        HookScope::Turn => turn_id.map(str::to_string),
    };
    notify(
        method,
        &HookNotification {
            thread_id: thread_id.to_string(),
            turn_id,
            run,
        },
    )
}
