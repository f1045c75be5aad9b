//! What one checkpoint records: per root, every covered path and what it was.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Format of manifests written by this build.
pub const MANIFEST_VERSION: u32 = 1;

/// One checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub id: String,
    /// Milliseconds since the epoch when it was taken.
    pub created_ms: u64,
    pub roots: Vec<RootState>,
    /// Files read (hashed) to take it: those the previous checkpoint could not vouch for.
    #[serde(skip)]
    pub files_read: usize,
    /// How it is written on disk ([`crate::Store::write_manifest_over`]).
    #[serde(skip)]
    pub written: Written,
}

/// How a checkpoint is written: whole, or as changes from `base`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// The checkpoint it is written as changes from (none: written whole).
    pub base: Option<String>,
    /// Deltas from the last checkpoint written whole, this one included.
    pub chain: u32,
    /// Their bytes.
    pub chain_bytes: u64,
    /// The bytes of that checkpoint written whole.
    pub whole_bytes: u64,
}

/// One root's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootState {
    /// Canonical absolute path.
    pub root: PathBuf,
    /// Relative path (`/`-separated) → what was there. The root itself is not listed.
    pub entries: BTreeMap<String, Node>,
    /// What was left out, and why (a rewind lists it).
    #[serde(default)]
    pub skipped: Vec<Skipped>,
}

/// A path and what it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Node {
    File {
        /// Permission bits (`0o7777`).
        mode: u32,
        size: u64,
        /// SHA-256 of the content, hex.
        hash: String,
        /// What makes the next checkpoint trust the hash without reading the file.
        #[serde(default)]
        stat: StatKey,
    },
    Dir {
        mode: u32,
    },
    /// Recorded as a link: never followed.
    Symlink {
        target: String,
    },
}

/// The stat fields that must all match for a file to count as unchanged. All zero means
/// "never trust" (a file changed too close to the checkpoint for its times to tell).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatKey {
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub dev: u64,
}

impl StatKey {
    pub fn trusted(&self) -> bool {
        *self != StatKey::default()
    }
}

impl Node {
    /// Same content, kind and mode (the stat cache aside).
    pub fn same_as(&self, other: &Node) -> bool {
        match (self, other) {
            (
                Node::File {
                    mode: a_mode,
                    hash: a_hash,
                    ..
                },
                Node::File {
                    mode: b_mode,
                    hash: b_hash,
                    ..
                },
            ) => a_mode == b_mode && a_hash == b_hash,
            (Node::Dir { mode: a }, Node::Dir { mode: b }) => a == b,
            (Node::Symlink { target: a }, Node::Symlink { target: b }) => a == b,
            _ => false,
        }
    }

    pub fn is_dir(&self) -> bool {
        matches!(self, Node::Dir { .. })
    }
}

/// A path a checkpoint does not cover.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Relative to the root.
    pub path: String,
    pub reason: String,
}

impl Manifest {
    /// The state of `root`, if this checkpoint covers it.
    pub fn root(&self, root: &std::path::Path) -> Option<&RootState> {
        self.roots.iter().find(|r| r.root == root)
    }

    /// Whether both record the same trees (ids, times and stat caches aside).
    pub fn same_trees(&self, other: &Manifest) -> bool {
        self.roots.len() == other.roots.len()
            && self.roots.iter().zip(&other.roots).all(|(a, b)| {
                a.root == b.root
                    && a.skipped == b.skipped
                    && a.entries.len() == b.entries.len()
                    && a.entries
                        .iter()
                        .zip(&b.entries)
                        .all(|((pa, na), (pb, nb))| pa == pb && na == nb)
            })
    }
}

/// Whether `path` lies in (or is) one of the `skipped` directories.
pub(crate) fn under_skipped(path: &str, skipped: &[Skipped]) -> bool {
    skipped.iter().any(|s| {
        // An empty path is the whole root.
        s.path.is_empty()
            || path == s.path
            || path
                .strip_prefix(s.path.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Whether `path` is `dir` or lies under it ("" is the whole root).
pub(crate) fn is_under(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}
