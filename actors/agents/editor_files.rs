//! The editor seam (`tool_orchestrator::editor_files`) seen through the agent tree.

use super::tree::AgentTree;
use crate::tool_orchestrator::editor_files::{EditorFiles, ThreadFiles};
use std::sync::Arc;
use troupe_messages::ids::ThreadId;

/// A frontend's [`EditorFiles`] seen through the runtime's agent tree: a local sub-agent
/// working in its root's files (not in a git worktree of its own) uses its root's editor,
/// so its patches land in the same buffers as the root's.
pub struct TreeEditorFiles {
    pub inner: Arc<dyn EditorFiles>,
    pub tree: Arc<AgentTree>,
}

impl EditorFiles for TreeEditorFiles {
    fn for_thread(&self, thread: ThreadId) -> Option<Arc<dyn ThreadFiles>> {
        self.inner.for_thread(thread).or_else(|| {
            self.tree
                .files_root(thread)
                .and_then(|root| self.inner.for_thread(root))
        })
    }
}
