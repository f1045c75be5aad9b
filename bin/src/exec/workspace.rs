//! Where `exec` works: `--add-dir` (extra writable roots) and `--worktree` (a new Git
//! worktree on its own branch).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// A worktree made for this run.
#[derive(Debug)]
pub struct Worktree {
    /// The directory to run in: the new worktree, at the same place inside the repository
    /// as the directory exec was started in.
    pub cwd: PathBuf,
    pub root: PathBuf,
    pub branch: String,
}

/// `--worktree`: `git worktree add -b troupe/<id> $TROUPE_HOME/worktrees/<repo>-<id> HEAD`.
pub fn create_worktree(cwd: &Path, home: &Path) -> Result<Worktree> {
    let top = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|err| {
        anyhow::anyhow!(
            "--worktree: {} is not inside a Git repository ({err})",
            cwd.display()
        )
    })?;
    let top = PathBuf::from(top.trim());
    git(&top, &["rev-parse", "--verify", "HEAD"]).map_err(|_| {
        anyhow::anyhow!(
            "--worktree: {} has no commit to check out yet (commit first)",
            top.display()
        )
    })?;
    let id = short_id();
    let repo = top
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("repo")
        .to_string();
    let root = home.join("worktrees").join(format!("{repo}-{id}"));
    let branch = format!("troupe/{id}");
    std::fs::create_dir_all(home.join("worktrees")).with_context(|| {
        format!(
            "--worktree: cannot create {}",
            home.join("worktrees").display()
        )
    })?;
    let root_text = root.to_string_lossy().into_owned();
    git(
        &top,
        &[
            "worktree", "add", "--quiet", "-b", &branch, &root_text, "HEAD",
        ],
    )
    .map_err(|err| anyhow::anyhow!("--worktree: cannot check out a new worktree: {err}"))?;
    let inside = std::fs::canonicalize(cwd)
        .ok()
        .and_then(|c| c.strip_prefix(&top).ok().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut run_in = root.join(inside);
    if !run_in.is_dir() {
        // The subdirectory is not tracked (or is ignored): start at the worktree's top.
        run_in = root.clone();
    }
    Ok(Worktree {
        cwd: run_in,
        root,
        branch,
    })
}

/// Runs git; its trimmed stderr on failure.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|err| format!("cannot run git: {err}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(if stderr.is_empty() {
            format!("git {} failed", args.join(" "))
        } else {
            stderr
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// 8 hex digits, different on every run (time and pid).
fn short_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{:08x}",
        (nanos as u64 ^ u64::from(std::process::id()).rotate_left(32)) as u32
    )
}
