//! The handler contract: what a tool call gets (`ToolContext`), what it gives back
//! (`ToolOutcome`), the trait every tool implements (`ToolHandler`) and its argument parsing.
//!
//! The bottom of the orchestrator's handler layers: the registry, the policy (approval gate,
//! permissions, the command flow), the handlers in `tools/` and the collaboration tools in
//! `agents/` all build on it, and it names none of them.

use super::editor_files::EditorFiles;
use super::services::TurnServices;
use crate::approvals::{PendingApprovals, SessionApprovals};
use futures::future::BoxFuture;
use ractor::ActorRef;
use std::sync::Arc;
use troupe_messages::ids::ThreadId;
use troupe_messages::items::ContentItem;
use troupe_messages::mailboxes::{SandboxMsg, SessionMsg};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::{ToolCall, ToolPayload, ToolSpec};

/// Whether a handler may run beside other calls of the same response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concurrency {
    /// Readers: run together with other shared calls.
    Shared,
    /// Writers: wait for every earlier call, and later calls wait for it.
    Exclusive,
}

/// Everything a handler may use while serving one call.
#[derive(Clone)]
pub struct ToolContext {
    pub call: ToolCall,
    /// The thread making the call, and its session (the collaboration tools need both).
    pub thread_id: ThreadId,
    pub session: ActorRef<SessionMsg>,
    /// Commands running at once across the runtime's agents; a command holds a permit.
    pub command_budget: Option<Arc<tokio::sync::Semaphore>>,
    pub settings: Arc<SessionSettings>,
    /// The unconfined `none` backend (danger-full-access and approved escalations).
    pub sandbox: ActorRef<SandboxMsg>,
    /// The confining backend (`linux` or `landlock`), or why none can run on this machine.
    pub confined: Result<ActorRef<SandboxMsg>, String>,
    /// Session cache and command rules.
    pub approvals: SessionApprovals,
    /// Where the user's decisions for this orchestrator's calls arrive.
    pub pending: PendingApprovals,
    /// State shared by the turn's calls: PTY sessions, the turn's diff, and the one route of
    /// their events to the session (`TurnServices::tell`).
    pub services: Arc<TurnServices>,
    /// The editor standing in for the disk under `apply_patch`, when a frontend set one.
    pub editor_files: Option<Arc<dyn EditorFiles>>,
}

/// What a handler produced for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub content: String,
    pub success: bool,
    /// Content parts sent back instead of `content` (an image `view_image` attached);
    /// `content` then describes them for events and hooks.
    pub parts: Vec<ContentItem>,
}

impl ToolOutcome {
    /// A failed call whose message the model reads.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: message.into(),
            success: false,
            parts: Vec::new(),
        }
    }

    /// A call that succeeded with this text.
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            success: true,
            parts: Vec::new(),
        }
    }

    /// A successful call whose output is `parts`; `content` says what they are.
    pub fn with_parts(content: impl Into<String>, parts: Vec<ContentItem>) -> Self {
        Self {
            content: content.into(),
            success: true,
            parts,
        }
    }
}

/// One tool's behaviour.
pub trait ToolHandler: Send + Sync + 'static {
    /// How the tool is advertised to the model.
    fn spec(&self) -> ToolSpec;
    /// The spec offered under these settings; `None` leaves the tool out (a variant of
    /// it, chosen by config, is offered instead).
    fn spec_for(&self, _settings: &SessionSettings) -> Option<ToolSpec> {
        Some(self.spec())
    }
    /// Whether it may run alongside other calls.
    fn concurrency(&self) -> Concurrency;
    /// The concurrency of one call: a command that turns out to be an `apply_patch` writes.
    fn concurrency_for(&self, _call: &ToolCall) -> Concurrency {
        self.concurrency()
    }
    /// Serve one call. Never panics on bad input: returns an error outcome instead.
    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome>;
}

/// A tool's JSON arguments as `T`; the error (for the model) names the tool and what is wrong.
pub fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    payload: &ToolPayload,
) -> Result<T, String> {
    let ToolPayload::Function { arguments } = payload else {
        return Err(format!("{tool} expects JSON function arguments"));
    };
    serde_json::from_str(arguments).map_err(|err| format!("invalid arguments for {tool}: {err}"))
}
