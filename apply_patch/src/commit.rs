//! Writing a plan to disk atomically: every file changes or none does.
//!
//! 1. Stage: each target's parent directory is opened by walking beneath its anchor without
//!    symlinks (missing directories created on the way), and the new contents go to a temp
//!    file in it (same directory, so the later rename is atomic and cannot cross filesystems).
//! 2. Swap: each existing target is renamed to a backup beside it, then the temp file is
//!    renamed into place (deletions just keep the backup).
//! 3. Drop the backups.
//!
//! Every step after the walk names files relative to the parent's descriptor (`*at` calls on
//! a single name), so no symlink swapped in meanwhile can send a write elsewhere.
//!
//! A failure in 1 or 2 undoes what was done so far, in reverse: installed files removed,
//! backups renamed back, temp files and created directories removed. Only a crash of the
//! process in the middle of step 2 can leave a mix, and then the backups are still there.

use super::beneath::Located;
use super::error::PatchError;
use super::plan::{FinalState, Plan};
use nix::fcntl::{renameat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode, SFlag};
use nix::unistd::UnlinkatFlags;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Writes every final state of `plan`, each at its located target.
pub fn commit(plan: &Plan) -> Result<(), PatchError> {
    let mut work = Work::default();
    let result = work
        .stage(&plan.files, &plan.targets)
        .and_then(|()| work.swap(&plan.files, &plan.targets));
    match result {
        Ok(()) => {
            work.finish();
            Ok(())
        }
        Err(err) => {
            work.undo();
            Err(err)
        }
    }
}

/// A name in an open directory.
struct Entry {
    dir: OwnedFd,
    name: OsString,
}

impl Entry {
    fn remove_file(&self) -> nix::Result<()> {
        nix::unistd::unlinkat(
            Some(self.dir.as_raw_fd()),
            self.name.as_os_str(),
            UnlinkatFlags::NoRemoveDir,
        )
    }
}

/// What has been done so far, so it can be undone.
#[derive(Default)]
struct Work {
    /// Target path → staged temp file holding its new contents.
    staged: BTreeMap<PathBuf, Entry>,
    /// Directories created, parents first.
    created_dirs: Vec<(OwnedFd, OsString)>,
    /// (target, backup) of each original moved aside, in one directory.
    backups: Vec<(Entry, OsString)>,
    /// Targets whose new contents are in place.
    installed: Vec<Entry>,
}

impl Work {
    fn stage(
        &mut self,
        files: &BTreeMap<PathBuf, FinalState>,
        targets: &BTreeMap<PathBuf, Located>,
    ) -> Result<(), PatchError> {
        for (path, state) in files {
            let FinalState::Present(text) = state else {
                continue;
            };
            let target = target_of(targets, path)?;
            let dir = target
                .open_parent(Some(&mut self.created_dirs))
                .map_err(|source| {
                    write_error("Failed to create parent directory of", path, source)
                })?;
            let temp = sibling(target.name(), "tmp");
            let file = create_new(&dir, &temp)
                .map_err(|source| write_error("Failed to write", path, source))?;
            let entry = Entry {
                dir: dup(&dir, path)?,
                name: temp,
            };
            self.staged.insert(path.clone(), entry);
            write_contents(file, &dir, target.name(), text)
                .map_err(|source| write_error("Failed to write", path, source))?;
        }
        Ok(())
    }

    fn swap(
        &mut self,
        files: &BTreeMap<PathBuf, FinalState>,
        targets: &BTreeMap<PathBuf, Located>,
    ) -> Result<(), PatchError> {
        for path in files.keys() {
            let target = target_of(targets, path)?;
            let dir = match self.staged.get(path) {
                Some(staged) => dup(&staged.dir, path)?,
                None => target
                    .open_parent(None)
                    .map_err(|source| write_error("Failed to replace", path, source))?,
            };
            let name = target.name().to_os_string();
            match fstatat(
                Some(dir.as_raw_fd()),
                name.as_os_str(),
                AtFlags::AT_SYMLINK_NOFOLLOW,
            ) {
                Ok(stat) if file_kind(stat.st_mode) == SFlag::S_IFDIR => {
                    let source = std::io::Error::other("it is a directory");
                    return Err(write_error("Failed to replace", path, source));
                }
                Ok(_) => {
                    let backup = sibling(&name, "bak");
                    rename_in(&dir, &name, &backup)
                        .map_err(|source| write_error("Failed to replace", path, source.into()))?;
                    let entry = Entry {
                        dir: dup(&dir, path)?,
                        name: name.clone(),
                    };
                    self.backups.push((entry, backup));
                }
                Err(nix::errno::Errno::ENOENT) => {}
                Err(source) => return Err(write_error("Failed to replace", path, source.into())),
            }
            if let Some(temp) = self.staged.get(path) {
                rename_in(&dir, &temp.name, &name)
                    .map_err(|source| write_error("Failed to write", path, source.into()))?;
                self.staged.remove(path);
                self.installed.push(Entry { dir, name });
            }
        }
        Ok(())
    }

    fn finish(self) {
        for (target, backup) in &self.backups {
            let entry = Entry {
                dir: match target.dir.try_clone() {
                    Ok(dir) => dir,
                    Err(_) => continue,
                },
                name: backup.clone(),
            };
            if let Err(err) = entry.remove_file() {
                tracing::warn!(backup = ?backup, %err, "could not remove patch backup");
            }
        }
    }

    /// Best effort: every step is tried even when an earlier one fails.
    fn undo(self) {
        for target in self.installed.iter().rev() {
            let _ = target.remove_file();
        }
        for (target, backup) in self.backups.iter().rev() {
            if let Err(err) = rename_in(&target.dir, backup, &target.name) {
                tracing::error!(target = ?target.name, backup = ?backup, %err,
                    "could not restore a file after a failed patch; its old contents are in the backup");
            }
        }
        for temp in self.staged.values() {
            let _ = temp.remove_file();
        }
        for (parent, name) in self.created_dirs.iter().rev() {
            let _ = nix::unistd::unlinkat(
                Some(parent.as_raw_fd()),
                name.as_os_str(),
                UnlinkatFlags::RemoveDir,
            );
        }
    }
}

fn target_of<'a>(
    targets: &'a BTreeMap<PathBuf, Located>,
    path: &Path,
) -> Result<&'a Located, PatchError> {
    targets.get(path).ok_or_else(|| {
        let source = std::io::Error::other("internal: the path was never located");
        write_error("Failed to write", path, source)
    })
}

fn dup(dir: &OwnedFd, path: &Path) -> Result<OwnedFd, PatchError> {
    dir.try_clone()
        .map_err(|source| write_error("Failed to write", path, source))
}

fn file_kind(mode: libc::mode_t) -> SFlag {
    SFlag::from_bits_truncate(mode) & SFlag::S_IFMT
}

fn rename_in(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> nix::Result<()> {
    renameat(Some(dir.as_raw_fd()), from, Some(dir.as_raw_fd()), to)
}

/// Creates `name` in `dir` (never reusing an existing file or following a link there).
fn create_new(dir: &OwnedFd, name: &OsStr) -> Result<std::fs::File, std::io::Error> {
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::openat(
        Some(dir.as_raw_fd()),
        name,
        flags,
        Mode::from_bits_truncate(0o666),
    )?;
    // SAFETY: `openat` returned a fresh descriptor that nothing else owns.
    let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    // A new file in the user's tree gets the user's mask, not the runtime's private one
    // (a replaced file takes its predecessor's mode afterwards).
    if let Some(mask) = troupe_messages::file_mask::user_mask() {
        nix::sys::stat::fchmod(file.as_raw_fd(), Mode::from_bits_truncate(0o666 & !mask))?;
    }
    Ok(file)
}

/// Writes `text`, keeping the mode of the regular file `target` it replaces (as an
/// in-place write would).
fn write_contents(
    mut file: std::fs::File,
    dir: &OwnedFd,
    target: &OsStr,
    text: &str,
) -> Result<(), std::io::Error> {
    use std::io::Write;
    file.write_all(text.as_bytes())?;
    if let Ok(stat) = fstatat(Some(dir.as_raw_fd()), target, AtFlags::AT_SYMLINK_NOFOLLOW) {
        if file_kind(stat.st_mode) == SFlag::S_IFREG {
            nix::sys::stat::fchmod(file.as_raw_fd(), Mode::from_bits_truncate(stat.st_mode))?;
        }
    }
    Ok(())
}

fn write_error(action: &'static str, path: &Path, source: std::io::Error) -> PatchError {
    PatchError::Write {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// A fresh hidden name for the same directory as `name`.
fn sibling(name: &OsStr, suffix: &str) -> OsString {
    let tag: u64 = rand::random();
    OsString::from(format!(
        ".{}.troupe-{tag:016x}.{suffix}",
        name.to_string_lossy()
    ))
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
