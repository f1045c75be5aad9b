//! The registry that routes a model call to its handler.
//!
//! It holds handlers by trait object only: which tools exist is decided above it
//! (`tools::builtin()`, the collaboration tools of `agents/`, a frontend's own). The registry is
//! built once per runtime; the tools advertised in a request are frozen with
//! that request, and a call naming a tool that was not advertised gets an error output.

use super::contract::ToolHandler;
use super::editor_files::EditorFiles;
use std::collections::BTreeMap;
use std::sync::Arc;
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::ToolSpec;

/// The tools of a runtime, by name, and its MCP servers (one manager per runtime: every
/// thread shares its connections).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    handlers: BTreeMap<String, Arc<dyn ToolHandler>>,
    /// Handlers of whole name families, by prefix (`mcp__…`).
    prefixed: Vec<(String, Arc<dyn ToolHandler>)>,
    mcp: Arc<troupe_mcp::McpManager>,
    editor_files: Option<Arc<dyn EditorFiles>>,
}

impl ToolRegistry {
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

    /// Sends every call whose name starts with `prefix` and names no registered tool to
    /// `handler` (the MCP tools: one handler finds the tool among those listed for the turn).
    pub fn register_prefix(&mut self, prefix: &str, handler: Arc<dyn ToolHandler>) {
        self.prefixed.push((prefix.to_string(), handler));
    }

    /// The handler for a name: a registered tool, else the handler of its prefix.
    pub fn get(&self, name: &str) -> Option<Arc<dyn ToolHandler>> {
        self.handlers.get(name).cloned().or_else(|| {
            self.prefixed
                .iter()
                .find(|(prefix, _)| name.starts_with(prefix.as_str()))
                .map(|(_, handler)| handler.clone())
        })
    }

    /// Lets `files` hold the patched files of the threads it claims (see `editor_files.rs`).
    pub fn with_editor_files(mut self, files: Arc<dyn EditorFiles>) -> Self {
        self.editor_files = Some(files);
        self
    }

    /// The editor standing in for the disk under `apply_patch`, if a frontend set one.
    pub fn editor_files(&self) -> Option<&Arc<dyn EditorFiles>> {
        self.editor_files.as_ref()
    }

    /// The runtime's MCP connections.
    pub fn mcp(&self) -> &Arc<troupe_mcp::McpManager> {
        &self.mcp
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
