//! A call's events as MCP notifications: every event except streaming deltas as a
//! `notifications/message` (logger `troupe`, data `{threadId, msg}` with the event as Troupe
//! records it), at or above the level the client chose with `logging/setLevel`; and, when the
//! request carried a progress token, a `notifications/progress` per event naming its type.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use troupe_mcp::rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use troupe_mcp::rmcp::service::{Peer, RoleServer};
use troupe_messages::events::EventMsg;

/// The logger name of every notification.
const LOGGER: &str = "troupe";

/// The client's minimum logging level (shared by all calls of a connection).
#[derive(Debug, Clone)]
pub struct LogLevel(Arc<AtomicU8>);

impl Default for LogLevel {
    /// Everything from `info` up until the client says otherwise.
    fn default() -> Self {
        Self(Arc::new(AtomicU8::new(rank(LoggingLevel::Info))))
    }
}

impl LogLevel {
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    fn allows(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Sends one call's notifications.
pub struct Notifier {
    level: LogLevel,
    progress: Option<ProgressToken>,
    sent: u64,
}

impl Notifier {
    pub fn new(level: LogLevel, progress: Option<ProgressToken>) -> Self {
        Self {
            level,
            progress,
            sent: 0,
        }
    }

    /// Streams one event (deltas are left out: the complete message follows them).
    pub async fn event(&mut self, peer: &Peer<RoleServer>, thread_id: &str, msg: &EventMsg) {
        if msg.is_delta() {
            return;
        }
        let data = serde_json::json!({ "threadId": thread_id, "msg": msg });
        let kind = data["msg"]["type"].as_str().unwrap_or("event").to_string();
        self.log(peer, level_of(msg), data).await;
        self.progress(peer, kind).await;
    }

    /// A note of the server's own (an approval it had to deny).
    pub async fn warning(&mut self, peer: &Peer<RoleServer>, thread_id: &str, text: &str) {
        let data = serde_json::json!({ "threadId": thread_id, "message": text });
        self.log(peer, LoggingLevel::Warning, data).await;
        self.progress(peer, text.to_string()).await;
    }

    async fn log(&self, peer: &Peer<RoleServer>, level: LoggingLevel, data: serde_json::Value) {
        if !self.level.allows(level) {
            return;
        }
        // A client that went away ends the call through its cancellation, not here.
        let _ = peer
            .notify_logging_message(LoggingMessageNotificationParam {
                level,
                logger: Some(LOGGER.into()),
                data,
            })
            .await;
    }

    async fn progress(&mut self, peer: &Peer<RoleServer>, message: String) {
        let Some(token) = &self.progress else { return };
        self.sent += 1;
        let _ = peer
            .notify_progress(ProgressNotificationParam {
                progress_token: token.clone(),
                progress: self.sent as f64,
                total: None,
                message: Some(message),
            })
            .await;
    }
}

fn level_of(msg: &EventMsg) -> LoggingLevel {
    match msg {
        EventMsg::Warning { .. } => LoggingLevel::Warning,
        EventMsg::Error { .. } => LoggingLevel::Error,
        EventMsg::ExecApprovalRequest { .. }
        | EventMsg::ApplyPatchApprovalRequest { .. }
        | EventMsg::RequestUserInput { .. } => LoggingLevel::Notice,
        EventMsg::SessionConfigured { .. }
        | EventMsg::TurnStarted { .. }
        | EventMsg::InputInjected { .. }
        | EventMsg::AgentMessageDelta { .. }
        | EventMsg::AgentMessage { .. }
        | EventMsg::AgentReasoningDelta { .. }
        | EventMsg::ExecCommandOutputDelta { .. }
        | EventMsg::AgentReasoning { .. }
        | EventMsg::ExecCommandBegin { .. }
        | EventMsg::ExecCommandEnd { .. }
        | EventMsg::ToolCallBegin { .. }
        | EventMsg::ToolCallEnd { .. }
        | EventMsg::McpToolCallBegin { .. }
        | EventMsg::McpToolCallEnd { .. }
        | EventMsg::PatchApplyBegin { .. }
        | EventMsg::PatchApplyEnd { .. }
        | EventMsg::PlanUpdated { .. }
        | EventMsg::TurnDiff { .. }
        | EventMsg::ItemRecorded { .. }
        | EventMsg::ContextCompacted { .. }
        | EventMsg::TokenCount { .. }
        | EventMsg::StreamRetry { .. }
        | EventMsg::TurnComplete { .. }
        | EventMsg::TurnAborted { .. }
        | EventMsg::CollabToolCall { .. }
        | EventMsg::HookStarted { .. }
        | EventMsg::HookCompleted { .. }
        | EventMsg::PermissionsGranted { .. }
        | EventMsg::GoalUpdated { .. }
        | EventMsg::AgentEvent { .. }
        | EventMsg::ShutdownComplete => LoggingLevel::Info,
    }
}
