//! Tool handlers and the registry that routes a model call to one.
//!
//! The registry is built once per runtime; the tools advertised in a request are frozen with
//! that request, and a call naming a tool that was not advertised gets an error output.

use crate::approvals::{PendingApprovals, SessionApprovals};
use futures::future::BoxFuture;
use ractor::ActorRef;
use std::collections::BTreeMap;
use std::sync::Arc;
use troupe_messages::ids::ThreadId;
use troupe_messages::items::ContentItem;
use troupe_messages::mailboxes::{SandboxMsg, SessionMsg};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::{ToolCall, ToolSpec};

use super::services::TurnServices;

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
    pub editor_files: Option<Arc<dyn super::editor_files::EditorFiles>>,
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

/// The tools of a runtime, by name, and its MCP servers (one manager per runtime: every
/// thread shares its connections).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    handlers: BTreeMap<String, Arc<dyn ToolHandler>>,
    mcp: Arc<troupe_mcp::McpManager>,
    editor_files: Option<Arc<dyn super::editor_files::EditorFiles>>,
}

impl ToolRegistry {
    /// The built-in tools.
    pub fn with_builtin_tools() -> Self {
        let mut registry = Self::default();
        registry.register(Arc::new(super::tools::shell::ShellHandler));
        registry.register(Arc::new(super::tools::apply_patch::ApplyPatchHandler));
        registry.register(Arc::new(super::tools::update_plan::PlanHandler));
        registry.register(Arc::new(super::tools::exec_command::ExecCommandHandler));
        registry.register(Arc::new(super::tools::write_stdin::WriteStdinHandler));
        for tool in super::tools::mcp_resources::ResourceTool::ALL {
            let manager = registry.mcp.clone();
            registry.register(Arc::new(super::tools::mcp_resources::McpResourceHandler {
                tool,
                manager,
            }));
        }
        registry.register(Arc::new(
            super::tools::request_permissions::RequestPermissionsHandler,
        ));
        registry.register(Arc::new(super::tools::view_image::ViewImageHandler));
        registry.register(Arc::new(super::tools::get_goal::GetGoalHandler));
        registry.register(Arc::new(super::tools::create_goal::CreateGoalHandler));
        registry.register(Arc::new(super::tools::update_goal::UpdateGoalHandler));
        registry.register(Arc::new(super::tools::web_search::WebSearchHandler));
        registry.register(Arc::new(
            super::tools::request_user_input::RequestUserInputHandler,
        ));
        registry
    }

    /// Adds (or replaces) a handler under its spec's name.
    pub fn register(&mut self, handler: Arc<dyn ToolHandler>) {
        self.handlers
            .insert(handler.spec().name().to_string(), handler);
    }

    /// The specs to advertise under `settings`, sorted by name so the prompt prefix stays
    /// stable. (There is no settings-free list: variants of a tool share its name.)
    pub fn specs_for(&self, settings: &SessionSettings) -> Vec<ToolSpec> {
        self.handlers
            .values()
            .filter_map(|h| h.spec_for(settings))
            .collect()
    }

    /// The handler for a name; every `mcp__…` name goes to the MCP handler, which finds the
    /// tool among those listed for the turn.
    pub fn get(&self, name: &str) -> Option<Arc<dyn ToolHandler>> {
        self.handlers.get(name).cloned().or_else(|| {
            name.starts_with(troupe_mcp::names::PREFIX).then(|| {
                Arc::new(super::tools::mcp::McpHandler {
                    manager: self.mcp.clone(),
                }) as Arc<dyn ToolHandler>
            })
        })
    }

    /// Lets `files` hold the patched files of the threads it claims (see `editor_files.rs`).
    pub fn with_editor_files(mut self, files: Arc<dyn super::editor_files::EditorFiles>) -> Self {
        self.editor_files = Some(files);
        self
    }

    /// The editor standing in for the disk under `apply_patch`, if a frontend set one.
    pub fn editor_files(&self) -> Option<&Arc<dyn super::editor_files::EditorFiles>> {
        self.editor_files.as_ref()
    }

    /// The runtime's MCP connections.
    pub fn mcp(&self) -> &Arc<troupe_mcp::McpManager> {
        &self.mcp
    }
}
