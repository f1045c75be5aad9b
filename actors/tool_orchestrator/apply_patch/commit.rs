//! Writing a plan to disk atomically: every file changes or none does.
//!
//! 1. Stage: each new content goes to a temp file beside its target (same directory, so the
//!    later rename is atomic and cannot cross filesystems); missing directories are created.
//! 2. Swap: each existing target is renamed to a backup beside it, then the temp file is
//!    renamed into place (deletions just keep the backup).
//! 3. Drop the backups.
//!
//! A failure in 1 or 2 undoes what was done so far, in reverse: installed files removed,
//! backups renamed back, temp files and created directories removed. Only a crash of the
//! process in the middle of step 2 can leave a mix, and then the backups are still there.

use super::error::PatchError;
use super::plan::FinalState;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Writes every final state in `files`.
pub fn commit(files: &BTreeMap<PathBuf, FinalState>) -> Result<(), PatchError> {
    let mut work = Work::default();
    let result = work.stage(files).and_then(|()| work.swap(files));
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

/// What has been done so far, so it can be undone.
#[derive(Default)]
struct Work {
    /// Target → staged temp file holding its new contents.
    staged: BTreeMap<PathBuf, PathBuf>,
    /// Directories created, parents first.
    created_dirs: Vec<PathBuf>,
    /// (target, backup) of each original moved aside.
    backups: Vec<(PathBuf, PathBuf)>,
    /// Targets whose new contents are in place.
    installed: Vec<PathBuf>,
}

impl Work {
    fn stage(&mut self, files: &BTreeMap<PathBuf, FinalState>) -> Result<(), PatchError> {
        for (path, state) in files {
            let FinalState::Present(text) = state else {
                continue;
            };
            let target = resolve_symlink(path);
            let parent = parent_of(&target);
            self.create_dirs(parent).map_err(|source| {
                write_error("Failed to create parent directory of", path, source)
            })?;
            let temp = sibling(&target, "tmp");
            write_new(&temp, text)
                .map_err(|source| write_error("Failed to write", path, source))?;
            self.staged.insert(path.clone(), temp.clone());
            if let Ok(meta) = std::fs::metadata(&target) {
                // Keep the mode of the file being replaced, as an in-place write would.
                if meta.is_file() {
                    std::fs::set_permissions(&temp, meta.permissions())
                        .map_err(|source| write_error("Failed to write", path, source))?;
                }
            }
        }
        Ok(())
    }

    fn swap(&mut self, files: &BTreeMap<PathBuf, FinalState>) -> Result<(), PatchError> {
        for (path, state) in files {
            let target = match state {
                FinalState::Present(_) => resolve_symlink(path),
                // Deleting a symlink removes the link, as `remove_file` does.
                FinalState::Absent => path.clone(),
            };
            match std::fs::symlink_metadata(&target) {
                Ok(meta) if meta.is_dir() => {
                    let source = std::io::Error::other("it is a directory");
                    return Err(write_error("Failed to replace", path, source));
                }
                Ok(_) => {
                    let backup = sibling(&target, "bak");
                    std::fs::rename(&target, &backup)
                        .map_err(|source| write_error("Failed to replace", path, source))?;
                    self.backups.push((target.clone(), backup));
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(write_error("Failed to replace", path, source)),
            }
            if let Some(temp) = self.staged.get(path) {
                std::fs::rename(temp, &target)
                    .map_err(|source| write_error("Failed to write", path, source))?;
                self.staged.remove(path);
                self.installed.push(target);
            }
        }
        Ok(())
    }

    fn finish(self) {
        for (_, backup) in &self.backups {
            if let Err(err) = std::fs::remove_file(backup) {
                tracing::warn!(backup = %backup.display(), %err, "could not remove patch backup");
            }
        }
    }

    /// Best effort: every step is tried even when an earlier one fails.
    fn undo(self) {
        for target in self.installed.iter().rev() {
            let _ = std::fs::remove_file(target);
        }
        for (target, backup) in self.backups.iter().rev() {
            if let Err(err) = std::fs::rename(backup, target) {
                tracing::error!(target = %target.display(), backup = %backup.display(), %err,
                    "could not restore a file after a failed patch; its old contents are in the backup");
            }
        }
        for temp in self.staged.values() {
            let _ = std::fs::remove_file(temp);
        }
        for dir in self.created_dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }

    fn create_dirs(&mut self, dir: &Path) -> Result<(), std::io::Error> {
        let mut missing = Vec::new();
        let mut current = Some(dir);
        while let Some(dir) = current {
            if dir.as_os_str().is_empty() || dir.exists() {
                break;
            }
            missing.push(dir.to_path_buf());
            current = dir.parent();
        }
        for dir in missing.into_iter().rev() {
            std::fs::create_dir(&dir)?;
            self.created_dirs.push(dir);
        }
        Ok(())
    }
}

/// Creates `path` (never reusing an existing file or following a link there) with `text`.
fn write_new(path: &Path, text: &str) -> Result<(), std::io::Error> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(text.as_bytes())
}

fn write_error(action: &'static str, path: &Path, source: std::io::Error) -> PatchError {
    PatchError::Write {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Writing through a symlink changes the file it points to (as `std::fs::write` would).
fn resolve_symlink(path: &Path) -> PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    if is_link {
        if let Ok(real) = std::fs::canonicalize(path) {
            return real;
        }
    }
    path.to_path_buf()
}

fn parent_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

/// A fresh hidden name in the same directory as `path`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tag: u64 = rand::random();
    parent_of(path).join(format!(".{name}.troupe-{tag:016x}.{suffix}"))
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
