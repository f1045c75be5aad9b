//! Restoring a checkpoint: from the current state (a checkpoint just taken) to the target,
//! touching only what differs, every access beneath the root's descriptor ([`fsat`]).

use crate::diff::{diff, Change, ChangeKind};
use crate::error::CheckpointError;
use crate::fsat;
use crate::manifest::{Manifest, Node, RootState, Skipped};
use crate::objects::Store;
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::{fchmod, Mode};
use nix::unistd::UnlinkatFlags;
use serde::Serialize;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// What a restore did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RestoreReport {
    /// Every path changed, as the target sees it (`Added` = put back, `Removed` = deleted).
    pub changed: Vec<Change>,
    /// Paths that could not be restored, with why.
    pub failed: Vec<(PathBuf, String)>,
    /// Directories the target does not have, left in place because they still hold
    /// files no checkpoint covers (ignored by `.gitignore`).
    pub kept_dirs: Vec<PathBuf>,
    /// What neither checkpoint covers (so the restore did not touch it).
    pub not_covered: Vec<(PathBuf, Skipped)>,
}

impl Store {
    /// Turns the roots from `current` (a checkpoint taken just now) into `target`.
    pub fn restore(
        &self,
        current: &Manifest,
        target: &Manifest,
    ) -> Result<RestoreReport, CheckpointError> {
        let mut report = RestoreReport {
            changed: diff(current, target),
            ..RestoreReport::default()
        };
        for wanted in &target.roots {
            let Some(now) = current.root(&wanted.root) else {
                continue;
            };
            for skipped in now.skipped.iter().chain(&wanted.skipped) {
                let entry = (wanted.root.clone(), skipped.clone());
                if !report.not_covered.contains(&entry) {
                    report.not_covered.push(entry);
                }
            }
            let changes: Vec<&Change> = report
                .changed
                .iter()
                .filter(|c| c.root == wanted.root)
                .collect();
            let root = fsat::open_root(&wanted.root)
                .map_err(|_| CheckpointError::BadRoot(wanted.root.clone()))?;
            let mut run = RootRestore {
                store: self,
                root: &root,
                now,
                wanted,
                loosened: Vec::new(),
                failed: Vec::new(),
                kept_dirs: Vec::new(),
            };
            run.apply(&changes);
            report.failed.extend(run.failed);
            report.kept_dirs.extend(run.kept_dirs);
        }
        Ok(report)
    }
}

struct RootRestore<'a> {
    store: &'a Store,
    root: &'a OwnedFd,
    now: &'a RootState,
    wanted: &'a RootState,
    /// Directories given owner write+search for the restore; their mode is set afterwards.
    loosened: Vec<String>,
    failed: Vec<(PathBuf, String)>,
    kept_dirs: Vec<PathBuf>,
}

impl RootRestore<'_> {
    fn apply(&mut self, changes: &[&Change]) {
        // Removals deepest first (a descendant sorts after its directory), then writes
        // parents first, then directory modes deepest first (a read-only directory would
        // refuse what goes into it).
        let mut removals: Vec<&str> = changes
            .iter()
            .filter(|c| matches!(c.kind, ChangeKind::Removed | ChangeKind::TypeChanged))
            .map(|c| c.path.as_str())
            .collect();
        removals.sort_unstable_by(|a, b| b.cmp(a));
        for path in removals {
            if let Err(err) = self.remove(path) {
                self.fail(path, err);
            }
        }
        let mut dir_modes: Vec<&str> = Vec::new();
        for change in changes {
            if change.kind == ChangeKind::Removed {
                continue;
            }
            let Some(node) = self.wanted.entries.get(&change.path) else {
                continue;
            };
            if node.is_dir() {
                dir_modes.push(&change.path);
            }
            if let Err(err) = self.write(&change.path, node, change.kind) {
                self.fail(&change.path, err);
            }
        }
        let loosened = std::mem::take(&mut self.loosened);
        let mut modes: Vec<&str> = dir_modes
            .into_iter()
            .chain(loosened.iter().map(String::as_str))
            .collect();
        modes.sort_unstable_by(|a, b| b.cmp(a));
        modes.dedup();
        for path in modes {
            let Some(Node::Dir { mode }) = self.wanted.entries.get(path) else {
                continue;
            };
            let set = fsat::open_beneath(self.root, path, OFlag::O_DIRECTORY | OFlag::O_RDONLY, 0)
                .and_then(|fd| fchmod(fd.as_raw_fd(), Mode::from_bits_truncate(*mode)));
            if let Err(errno) = set {
                self.fail(path, errno.to_string());
            }
        }
    }

    fn fail(&mut self, path: &str, why: String) {
        self.failed.push((self.wanted.root.join(path), why));
    }

    /// The parent directory of `path`, opened, with owner write+search added if it lacked
    /// them (recorded: its mode is set again at the end).
    fn parent(&mut self, path: &str) -> Result<(OwnedFd, String), String> {
        let (dir, name) = fsat::open_parent(self.root, path).map_err(|e| e.to_string())?;
        let stat = nix::sys::stat::fstat(dir.as_raw_fd()).map_err(|e| e.to_string())?;
        if stat.st_mode & 0o300 != 0o300 {
            fchmod(
                dir.as_raw_fd(),
                Mode::from_bits_truncate((stat.st_mode | 0o300) & 0o7777),
            )
            .map_err(|e| e.to_string())?;
            let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
            self.loosened.push(parent.to_string());
        }
        Ok((dir, name.to_string()))
    }

    fn remove(&mut self, path: &str) -> Result<(), String> {
        let Some(node) = self.now.entries.get(path) else {
            return Ok(());
        };
        let (dir, name) = self.parent(path)?;
        let flag = if node.is_dir() {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        match nix::unistd::unlinkat(Some(dir.as_raw_fd()), name.as_str(), flag) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(Errno::ENOTEMPTY) => {
                self.kept_dirs.push(self.wanted.root.join(path));
                Ok(())
            }
            Err(errno) => Err(errno.to_string()),
        }
    }

    fn write(&mut self, path: &str, node: &Node, kind: ChangeKind) -> Result<(), String> {
        let (dir, name) = self.parent(path)?;
        match node {
            Node::Dir { .. } => {
                match nix::sys::stat::mkdirat(
                    Some(dir.as_raw_fd()),
                    name.as_str(),
                    Mode::from_bits_truncate(0o700),
                ) {
                    Ok(()) | Err(Errno::EEXIST) => Ok(()),
                    Err(errno) => Err(errno.to_string()),
                }
            }
            Node::File { mode, .. } if kind == ChangeKind::ModeChanged => {
                let file = fsat::open_file(&dir, &name).map_err(|e| e.to_string())?;
                fchmod(file.as_raw_fd(), Mode::from_bits_truncate(*mode)).map_err(|e| e.to_string())
            }
            Node::File { mode, hash, .. } => {
                let bytes = self.store.read_object(hash).map_err(|e| e.to_string())?;
                if kind == ChangeKind::Modified {
                    if let Some(done) = overwrite_in_place(&dir, &name, &bytes, *mode) {
                        return done;
                    }
                }
                let tmp = fsat::temp_name();
                let fd = fsat::open_beneath(
                    &dir,
                    &tmp,
                    OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL,
                    0o600,
                )
                .map_err(|e| e.to_string())?;
                let mut file = std::fs::File::from(fd);
                let written = file
                    .write_all(&bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|()| {
                        fchmod(file.as_raw_fd(), Mode::from_bits_truncate(*mode))
                            .map_err(|e| e.to_string())
                    })
                    .and_then(|()| rename_into_place(&dir, &tmp, &name));
                if written.is_err() {
                    let _ = nix::unistd::unlinkat(
                        Some(dir.as_raw_fd()),
                        tmp.as_str(),
                        UnlinkatFlags::NoRemoveDir,
                    );
                }
                written
            }
            Node::Symlink { target } => {
                let tmp = fsat::temp_name();
                nix::unistd::symlinkat(target.as_str(), Some(dir.as_raw_fd()), tmp.as_str())
                    .map_err(|e| e.to_string())?;
                let placed = rename_into_place(&dir, &tmp, &name);
                if placed.is_err() {
                    let _ = nix::unistd::unlinkat(
                        Some(dir.as_raw_fd()),
                        tmp.as_str(),
                        UnlinkatFlags::NoRemoveDir,
                    );
                }
                placed
            }
        }
    }
}

/// Writes a changed file over its old content when it is a regular file with no other
/// link (a write through a second link would change a file elsewhere, perhaps outside the
/// root) that the owner may write: no new inode, which on a file system short of recently
/// freed inodes costs far more than the write. Anything else, or any failure before the
/// first byte is written, is left to the temp-file-and-rename path (`None`).
fn overwrite_in_place(
    dir: &OwnedFd,
    name: &str,
    bytes: &[u8],
    mode: u32,
) -> Option<Result<(), String>> {
    use std::os::unix::fs::FileExt;
    let fd = fsat::open_beneath(dir, name, OFlag::O_WRONLY | OFlag::O_NONBLOCK, 0).ok()?;
    let stat = nix::sys::stat::fstat(fd.as_raw_fd()).ok()?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFREG || stat.st_nlink != 1 {
        return None;
    }
    let file = std::fs::File::from(fd);
    // Once writing has begun, a failure is final: the temp path would not do better.
    Some(
        file.write_all_at(bytes, 0)
            .and_then(|()| file.set_len(bytes.len() as u64))
            .map_err(|e| e.to_string())
            .and_then(|()| {
                fchmod(file.as_raw_fd(), Mode::from_bits_truncate(mode)).map_err(|e| e.to_string())
            }),
    )
}

/// Renames `tmp` over `name` in `dir`: a link there is replaced, never followed.
fn rename_into_place(dir: &OwnedFd, tmp: &str, name: &str) -> Result<(), String> {
    nix::fcntl::renameat(Some(dir.as_raw_fd()), tmp, Some(dir.as_raw_fd()), name)
        .map_err(|e| e.to_string())
}
