//! Where `exec` works: `--add-dir` (extra writable roots) and `--worktree` (a new Git
//! worktree on its own branch).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use troupe_actors::agents::worktree::{self, Worktree};

/// `--add-dir DIR…`: each an existing directory, made absolute (symlinks resolved, so the
/// sandbox binds what the user meant).
pub fn extra_writable_roots(dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    dirs.iter()
        .map(|dir| {
            let path = std::fs::canonicalize(dir)
                .with_context(|| format!("--add-dir {}: not a usable directory", dir.display()))?;
            if !path.is_dir() {
                bail!(
                    "--add-dir {}: not a directory (give the folder to make writable)",
                    dir.display()
                );
            }
            Ok(path)
        })
        .collect()
}

/// `--worktree`: a new worktree on its own branch under `$TROUPE_HOME/worktrees/` (the
/// same code sub-agents use for `spawn_agent {worktree: true}`).
pub fn create_worktree(cwd: &Path, home: &Path) -> Result<Worktree> {
    worktree::create(cwd, home, None).map_err(|err| anyhow::anyhow!("--worktree: {err}"))
}
