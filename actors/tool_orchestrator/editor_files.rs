//! The seam through which a frontend that holds the files (an editor over ACP, with unsaved
//! buffers) reads and writes what `apply_patch` touches, instead of the disk.
//!
//! Troupe still decides everything: the patch is parsed, every path is located under the
//! thread's writable roots (`Confinement`) and approved before the editor is asked to read
//! or write it; the editor only stands in for the bytes. (The agent tree's view of it, a
//! sub-agent using its root's editor, is `agents::editor_files`.)

use futures::future::BoxFuture;
use std::path::PathBuf;
use std::sync::Arc;
use troupe_messages::ids::ThreadId;

/// Per runtime: which threads' files an editor holds.
pub trait EditorFiles: Send + Sync {
    /// The editor holding `thread`'s files, or `None`: its patches use the disk.
    fn for_thread(&self, thread: ThreadId) -> Option<Arc<dyn ThreadFiles>>;
}

/// One thread's editor.
pub trait ThreadFiles: Send + Sync {
    /// The file's text as the editor has it (an unsaved buffer included); `Ok(None)` when
    /// the file does not exist.
    fn read_text(&self, path: PathBuf) -> BoxFuture<'static, Result<Option<String>, String>>;
    /// Replaces the file's text (the editor saves it or keeps it as an unsaved buffer).
    fn write_text(&self, path: PathBuf, text: String) -> BoxFuture<'static, Result<(), String>>;
}
