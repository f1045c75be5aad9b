//! Lifecycle hooks: the configured commands (`[[hooks.<Event>]]` in config.toml or a
//! `hooks.json`, Codex's format) and what a run of one reports.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Default seconds a hook may run before it is killed (Codex's default).
pub const DEFAULT_HOOK_TIMEOUT_SEC: u64 = 600;
/// Default number of times Stop hooks may send a finished turn back to the model.
pub const DEFAULT_MAX_STOP_CONTINUATIONS: u32 = 3;

/// The lifecycle points a hook can run at; the serialized names are Codex's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum HookEventName {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PermissionRequest,
    Stop,
}

impl HookEventName {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PermissionRequest => "PermissionRequest",
            Self::Stop => "Stop",
        }
    }

    /// Whether the group's `matcher` is used: tool events match the tool name, SessionStart
    /// its source (`startup`, `resume`); UserPromptSubmit and Stop run every hook.
    pub fn uses_matcher(self) -> bool {
        !matches!(self, Self::UserPromptSubmit | Self::Stop)
    }
}

/// One configured command hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookHandler {
    pub event: HookEventName,
    /// `None` (or empty, or `*`) matches everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// Run with `sh -c`, in the session's cwd, the payload JSON on stdin.
    pub command: String,
    pub timeout_sec: u64,
    /// The file that configured it (shown in warnings).
    pub source: PathBuf,
}

/// The hooks of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSettings {
    /// In configuration order: system, user, trusted project files.
    #[serde(default)]
    pub handlers: Vec<HookHandler>,
    /// How many times Stop hooks may continue one turn (`max_stop_continuations`).
    #[serde(default = "default_max_stop_continuations")]
    pub max_stop_continuations: u32,
}

fn default_max_stop_continuations() -> u32 {
    DEFAULT_MAX_STOP_CONTINUATIONS
}

impl Default for HookSettings {
    fn default() -> Self {
        Self {
            handlers: Vec::new(),
            max_stop_continuations: DEFAULT_MAX_STOP_CONTINUATIONS,
        }
    }
}

impl HookSettings {
    pub fn has(&self, event: HookEventName) -> bool {
        self.handlers.iter().any(|h| h.event == event)
    }
}

/// What one hook run decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookDecision {
    /// Ran and said nothing that changes the flow (it may have added context).
    None,
    /// Blocked (exit 2, `decision: "block"`, `permissionDecision: "deny"`).
    Block,
    /// A PermissionRequest hook approved.
    Allow,
    /// A PermissionRequest hook denied.
    Deny,
    /// Timed out, crashed, or printed something unusable: counts as no decision.
    Failed,
}

impl HookDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Block => "block",
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Failed => "failed",
        }
    }
}
