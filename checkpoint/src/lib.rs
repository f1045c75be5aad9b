//! Checkpoints of a turn's writable roots, and rewinding them.
//!
//! A checkpoint is a [`Manifest`]: for each root, every path (relative, `/`-separated) with
//! its kind, full permission bits, and content hash or link target. Contents live once in a
//! content-addressed object store (SHA-256); a manifest is written last, atomically, so a
//! checkpoint torn by a crash is never seen, and written as its changes from the previous one
//! where that is smaller ([`Store::write_manifest_over`]). Taking one is incremental: a file
//! whose size, times, inode and device match the previous manifest is not read again, and a
//! [`Tracker`] lists again only the directories inotify says changed.
//!
//! Restoring never leaves the root: every access walks beneath an open descriptor of the
//! root with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, so a symlink planted anywhere
//! on the way fails the access instead of redirecting it ([`fsat`]).
//!
//! Not covered, and said so: `.git` and `.troupe` (never walked), files `.gitignore` ignores,
//! directories over the size limit, paths that are not UTF-8, and the excluded paths a caller
//! names (the store itself, deny-read paths).

mod delta;
mod diff;
mod error;
mod fsat;
pub mod index;
mod manifest;
mod objects;
mod prune;
mod refresh;
mod restore;
mod take;
mod tracker;
mod walk;
mod watches;

pub use diff::{diff, Change, ChangeKind};
pub use error::CheckpointError;
pub use manifest::{Manifest, Node, RootState, Skipped, StatKey, Written};
pub use objects::{write_atomically, Store};
pub use prune::{prune, PruneLimits, PruneReport};
pub use restore::RestoreReport;
pub use take::{Options, RootSpec};
pub use tracker::Tracker;

/// Up to `limit` bytes of the regular file `rel` beneath `root`, read the way a restore
/// reaches it (no symlink followed, nothing outside the root); `None` when it holds more.
pub fn read_beneath(
    root: &std::path::Path,
    rel: &str,
    limit: u64,
) -> Result<Option<Vec<u8>>, CheckpointError> {
    use std::io::Read;
    let failed = |errno: nix::errno::Errno| CheckpointError::Io {
        action: "cannot read",
        path: root.join(rel),
        source: std::io::Error::from(errno),
    };
    let dir = fsat::open_root(root).map_err(|_| CheckpointError::BadRoot(root.to_path_buf()))?;
    let file = fsat::open_file(&dir, rel).map_err(failed)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(CheckpointError::io("cannot read", root.join(rel)))?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Directory names never walked nor restored: git's own state (the user's index, branches
/// and stash are never touched) and Troupe's project config.
pub const NEVER_WALKED: &[&str] = &[".git", ".troupe"];

#[cfg(test)]
#[path = "store_tests.rs"]
mod store_tests;

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tracker_tests;

#[cfg(test)]
#[path = "roundtrip_tests.rs"]
mod roundtrip_tests;
