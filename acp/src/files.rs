//! The editor as the files of a session's thread (`fs/read_text_file`,
//! `fs/write_text_file`), for the clients that offer them: `apply_patch` then sees unsaved
//! buffers and its writes land in the editor. Troupe locates and approves every path first
//! (`troupe_actors::tool_orchestrator::editor_files`).

use crate::rpc::{Peer, RESOURCE_NOT_FOUND};
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use troupe_actors::tool_orchestrator::editor_files::{EditorFiles, ThreadFiles};
use troupe_messages::ids::ThreadId;

/// The runtime's view of which threads an editor holds: sessions register here.
#[derive(Default)]
pub struct EditorBridge {
    threads: Mutex<HashMap<ThreadId, Arc<SessionFiles>>>,
}

impl EditorBridge {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// `thread`'s patches go through this session's editor (only with the write capability).
    pub fn register(&self, thread: ThreadId, files: SessionFiles) {
        if !files.write {
            return;
        }
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(thread, Arc::new(files));
        }
    }

    pub fn unregister(&self, thread: &ThreadId) {
        if let Ok(mut threads) = self.threads.lock() {
            threads.remove(thread);
        }
    }
}

impl EditorFiles for EditorBridge {
    fn for_thread(&self, thread: ThreadId) -> Option<Arc<dyn ThreadFiles>> {
        let threads = self.threads.lock().ok()?;
        threads
            .get(&thread)
            .map(|files| files.clone() as Arc<dyn ThreadFiles>)
    }
}

/// One session's editor: the connection and what the client said it can do.
pub struct SessionFiles {
    pub peer: Arc<Peer>,
    pub session_id: String,
    pub read: bool,
    pub write: bool,
}

impl ThreadFiles for SessionFiles {
    fn read_text(&self, path: PathBuf) -> BoxFuture<'static, Result<Option<String>, String>> {
        let peer = self.peer.clone();
        let (read, session_id) = (self.read, self.session_id.clone());
        Box::pin(async move {
            if !read {
                return Ok(None);
            }
            let params = json!({"sessionId": session_id, "path": path});
            match peer.request("fs/read_text_file", params).await {
                Ok(result) => match result.get("content").and_then(Value::as_str) {
                    Some(text) => Ok(Some(text.to_string())),
                    None => Err("the answer has no content".into()),
                },
                // A file the editor does not know: the disk decides whether it exists.
                Err(err) if err.code == RESOURCE_NOT_FOUND => Ok(None),
                Err(err) => Err(err.message),
            }
        })
    }

    fn write_text(&self, path: PathBuf, text: String) -> BoxFuture<'static, Result<(), String>> {
        let peer = self.peer.clone();
        let session_id = self.session_id.clone();
        Box::pin(async move {
            let params = json!({"sessionId": session_id, "path": path, "content": text});
            peer.request("fs/write_text_file", params)
                .await
                .map(|_| ())
                .map_err(|err| err.message)
        })
    }
}
