//! Permission settings: when to ask the user, and how commands are confined.

use serde::{Deserialize, Serialize};

/// When the runtime asks the user before running a tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    /// Ask for everything but known-safe read-only commands.
    #[serde(rename = "untrusted")]
    UnlessTrusted,
    /// The model decides when to ask (escalation requests); the default.
    #[default]
    OnRequest,
    /// Ask when a sandboxed attempt fails.
    OnFailure,
    /// Never ask; failures go back to the model.
    Never,
}

/// How strongly commands are confined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read anything, write nothing.
    #[default]
    ReadOnly,
    /// Write inside the workspace roots and temp dirs.
    WorkspaceWrite,
    /// No confinement.
    DangerFullAccess,
}

impl SandboxMode {
    /// The wire name, as in `-s/--sandbox`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }
}

/// How the agent collaborates: carry the work out, or only plan it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollaborationMode {
    /// Investigate read-only and propose a plan; no changes, no automatic follow-up turns.
    Plan,
    /// Do the work.
    #[default]
    #[serde(
        alias = "code",
        alias = "pair_programming",
        alias = "execute",
        alias = "custom"
    )]
    Default,
}
