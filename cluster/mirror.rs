//! A remote thread's rollout, copied line by line under the follower's `TROUPE_HOME` (so
//! `troupe list`, resume and fork work on it as on a local thread). Used by `exec --remote`
//! and by the stand-in of a remote sub-agent.

use crate::ClusterError;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The mirror of one remote thread's rollout.
pub struct RolloutMirror {
    home: PathBuf,
    file: Option<(PathBuf, std::fs::File)>,
}

impl RolloutMirror {
    pub fn new(home: &Path) -> Self {
        Self {
            home: home.to_path_buf(),
            file: None,
        }
    }

    /// The mirrored file, once a line was written.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|(path, _)| path.as_path())
    }

    /// Appends `line` to the rollout at `relative` (a path under `sessions/`, as the worker
    /// named it; anything else is refused: a hostile peer must not write elsewhere).
    pub fn append(&mut self, relative: Option<&str>, line: &str) -> Result<(), ClusterError> {
        let relative = relative.ok_or_else(|| ClusterError::Mirror {
            path: String::new(),
            reason: "a rollout line names no rollout".into(),
        })?;
        let target = self.home.join(safe_relative(relative)?);
        if self.file.as_ref().is_none_or(|(open, _)| *open != target) {
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir).map_err(|err| mirror_error(dir, err))?;
            }
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&target)
                .map_err(|err| mirror_error(&target, err))?;
            self.file = Some((target.clone(), file));
        }
        if let Some((_, file)) = &mut self.file {
            writeln!(file, "{line}").map_err(|err| mirror_error(&target, err))?;
        }
        Ok(())
    }

    /// Makes the mirrored lines durable (before the file is indexed or resumed).
    pub fn sync(&self) {
        if let Some((_, file)) = &self.file {
            let _ = file.sync_all();
        }
    }
}

/// `relative` when it is a `.jsonl` path under `sessions/` with no `..`, root or prefix.
pub fn safe_relative(relative: &str) -> Result<&Path, ClusterError> {
    let path = Path::new(relative);
    let safe = path.starts_with("sessions")
        && path.extension().is_some_and(|ext| ext == "jsonl")
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    if safe {
        Ok(path)
    } else {
        Err(ClusterError::Mirror {
            path: relative.to_string(),
            reason: "the worker named an unsafe rollout path".into(),
        })
    }
}

fn mirror_error(path: &Path, err: std::io::Error) -> ClusterError {
    ClusterError::Mirror {
        path: path.display().to_string(),
        reason: err.to_string(),
    }
}

#[cfg(test)]
#[path = "mirror_tests.rs"]
mod tests;
