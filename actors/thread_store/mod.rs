//! The thread index: an embedded sled database at `$TROUPE_HOME/state/`, mapping thread id →
//! [`ThreadSummary`] (bincode), with a secondary tree ordered by last update.
//!
//! The rollout files are the source of truth; this index only makes `list` and `resume
//! --last` fast. [`reconcile`] brings it in line with the files (new, changed, moved or
//! removed rollouts), and a missing or outdated index is simply rebuilt.
//!
//! One process at a time: sled locks its database file. The ThreadManager opens the store
//! once and hands it to its sessions (`Arc`); sled synchronises them. A second troupe process
//! that finds the store locked runs without it (its rollouts are still written, and the next
//! process that opens the index picks them up from the files).

pub mod agents_on_disk;
pub mod ops;
pub mod reconcile;
pub mod rewind;
pub mod rewind_preview;
pub mod summary;
#[cfg(test)]
pub(crate) mod test_support;

use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_messages::ids::ThreadId;
use troupe_messages::threads::ThreadSummary;

/// Version of the index layout; a different one is rebuilt from the rollouts.
/// 2: summaries carry a sub-agent's task path, depth and nickname.
/// 4: token usage carries the provider's cache writes.
const INDEX_FORMAT: u32 = 4;
const FORMAT_KEY: &[u8] = b"format";

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("the thread index {path} is in use by another troupe process; it is not updated by this one (rollouts are, and the index catches up later)")]
    Locked { path: PathBuf },
    #[error("the thread index {path} is damaged ({reason}); run `troupe doctor --reindex` to set it aside and rebuild it from the rollout files")]
    Damaged { path: PathBuf, reason: String },
    #[error("cannot open the thread index {path}: {cause}; {advice} (threads still run and are saved without it)")]
    Unavailable {
        path: PathBuf,
        cause: String,
        advice: &'static str,
    },
    #[error("thread index {path}: {reason}")]
    Failed { path: PathBuf, reason: String },
}

/// The open index.
pub struct ThreadStore {
    path: PathBuf,
    db: sled::Db,
    threads: sled::Tree,
    by_updated: sled::Tree,
}

impl std::fmt::Debug for ThreadStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadStore")
            .field("path", &self.path)
            .finish()
    }
}

/// Why opening the index at `path` failed, with the advice that fits: only what sled reads
/// back as corrupt is damage that `troupe doctor --reindex` repairs; a full or read-only
/// disk, or a file where the directory should be, is not.
fn open_failure(path: &Path, err: sled::Error) -> StoreError {
    let path = path.to_path_buf();
    let io = match err {
        sled::Error::Io(io) => io,
        other => {
            return StoreError::Damaged {
                path,
                reason: other.to_string(),
            }
        }
    };
    if io.to_string().contains("could not acquire lock") {
        return StoreError::Locked { path };
    }
    if io.raw_os_error().is_none() {
        // Raised by sled itself while reading its files back: what it found is bad.
        return StoreError::Damaged {
            path,
            reason: io.to_string(),
        };
    }
    StoreError::Unavailable {
        path,
        cause: io.to_string(),
        advice: io_advice(&io),
    }
}

/// What the user can do about an I/O error opening the index.
fn io_advice(err: &std::io::Error) -> &'static str {
    match err.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => "free some space on that disk",
        Some(libc::EROFS) | Some(libc::EACCES) | Some(libc::EPERM) => {
            "make TROUPE_HOME writable, or point TROUPE_HOME at a writable directory"
        }
        Some(libc::ENOTDIR) | Some(libc::EEXIST) | Some(libc::EISDIR) => {
            "it must be a directory: move aside the file that is in its place"
        }
        _ => "check that it is a directory this user can write",
    }
}

/// Where the index lives.
pub fn state_dir(home: &Path) -> PathBuf {
    home.join("state")
}

impl ThreadStore {
    /// Opens (or creates) the index under `home`. A layout from another version is emptied
    /// (it is derived data) so that the next [`reconcile`] rebuilds it.
    pub fn open(home: &Path) -> Result<Self, StoreError> {
        let path = state_dir(home);
        let db = sled::Config::new()
            .path(&path)
            .open()
            .map_err(|err| open_failure(&path, err))?;
        let damaged = |err: sled::Error| open_failure(&path, err);
        let threads = db.open_tree("threads").map_err(damaged)?;
        let by_updated = db.open_tree("by_updated").map_err(damaged)?;
        let store = Self {
            path: path.clone(),
            db,
            threads,
            by_updated,
        };
        let format = store.db.get(FORMAT_KEY).map_err(damaged)?;
        if format.as_deref() != Some(INDEX_FORMAT.to_be_bytes().as_slice()) {
            store.threads.clear().map_err(damaged)?;
            store.by_updated.clear().map_err(damaged)?;
            store
                .db
                .insert(FORMAT_KEY, INDEX_FORMAT.to_be_bytes().as_slice())
                .map_err(damaged)?;
        }
        Ok(store)
    }

    /// Where the index lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn failed(&self, reason: impl std::fmt::Display) -> StoreError {
        StoreError::Failed {
            path: self.path.clone(),
            reason: reason.to_string(),
        }
    }

    /// Inserts or replaces the summary of a thread.
    pub fn put(&self, summary: &ThreadSummary) -> Result<(), StoreError> {
        let value = bincode::serialize(summary).map_err(|e| self.failed(e))?;
        let old = self
            .threads
            .insert(summary.id.to_string().as_bytes(), value)
            .map_err(|e| self.failed(e))?;
        if let Some(old) = old.and_then(|bytes| self.decode(&bytes).ok()) {
            self.by_updated
                .remove(updated_key(&old))
                .map_err(|e| self.failed(e))?;
        }
        self.by_updated
            .insert(updated_key(summary), summary.id.to_string().as_bytes())
            .map_err(|e| self.failed(e))?;
        Ok(())
    }

    /// The summary of one thread.
    pub fn get(&self, id: &str) -> Result<Option<ThreadSummary>, StoreError> {
        match self
            .threads
            .get(id.as_bytes())
            .map_err(|e| self.failed(e))?
        {
            Some(bytes) => self.decode(&bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Every thread whose id starts with `prefix` (lowercase hex), in id order: a range scan
    /// of the index, not a walk over the rollout files.
    pub fn with_prefix(&self, prefix: &str) -> Result<Vec<ThreadSummary>, StoreError> {
        self.threads
            .scan_prefix(prefix.as_bytes())
            .map(|entry| {
                let (_, bytes) = entry.map_err(|e| self.failed(e))?;
                self.decode(&bytes)
            })
            .collect()
    }

    /// Drops a thread from the index (its files are not touched).
    pub fn remove(&self, id: ThreadId) -> Result<(), StoreError> {
        if let Some(old) = self
            .threads
            .remove(id.to_string().as_bytes())
            .map_err(|e| self.failed(e))?
        {
            if let Ok(old) = self.decode(&old) {
                self.by_updated
                    .remove(updated_key(&old))
                    .map_err(|e| self.failed(e))?;
            }
        }
        Ok(())
    }

    /// Every thread, most recently updated first.
    pub fn list(&self) -> Result<Vec<ThreadSummary>, StoreError> {
        let mut out = Vec::with_capacity(self.threads.len());
        for entry in self.by_updated.iter().rev() {
            let (_, id) = entry.map_err(|e| self.failed(e))?;
            if let Some(bytes) = self.threads.get(&id).map_err(|e| self.failed(e))? {
                out.push(self.decode(&bytes)?);
            }
        }
        Ok(out)
    }

    /// Every thread in no particular order (cheaper than [`list`](Self::list)).
    pub fn all(&self) -> Result<Vec<ThreadSummary>, StoreError> {
        self.threads
            .iter()
            .map(|entry| {
                let (_, bytes) = entry.map_err(|e| self.failed(e))?;
                self.decode(&bytes)
            })
            .collect()
    }

    /// Writes the index to disk.
    pub fn flush(&self) -> Result<(), StoreError> {
        self.db.flush().map(|_| ()).map_err(|e| self.failed(e))
    }

    fn decode(&self, bytes: &[u8]) -> Result<ThreadSummary, StoreError> {
        bincode::deserialize(bytes).map_err(|err| StoreError::Damaged {
            path: self.path.clone(),
            reason: format!("undecodable entry: {err}"),
        })
    }
}

/// Key of the by-updated tree: big-endian time, then the id (unique, sorts by time).
fn updated_key(summary: &ThreadSummary) -> Vec<u8> {
    let id = summary.id.to_string();
    let mut key = Vec::with_capacity(8 + id.len());
    // Offset so that negative times still sort before positive ones.
    key.extend_from_slice(&(summary.updated_at_ms as u64 ^ (1 << 63)).to_be_bytes());
    key.extend_from_slice(id.as_bytes());
    key
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
