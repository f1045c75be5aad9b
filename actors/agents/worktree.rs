//! Git worktrees for writers: `exec --worktree` and `spawn_agent {worktree: true}` both run
//! in a fresh `git worktree` of the caller's repository, on a branch of its own, under
//! `$TROUPE_HOME/worktrees/`.
//!
//! Everything here runs `git` and waits for it: call it from `spawn_blocking` (or from the
//! binary before the runtime starts), never from an actor handler.

use std::path::{Path, PathBuf};

/// Why a worktree could not be made, committed to or removed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("{dir} is not inside a Git repository ({reason})")]
    NotARepository { dir: String, reason: String },
    #[error("{dir} has no commit to check out yet (commit first)")]
    NoCommit { dir: String },
    #[error("cannot create {dir}: {reason}")]
    CreateDir { dir: String, reason: String },
    #[error("cannot check out a new worktree: {0}")]
    Checkout(String),
    #[error("git failed in {dir}: {reason}")]
    Git { dir: String, reason: String },
}

/// A worktree made for one run or one sub-agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// The directory to run in: the new worktree, at the same place inside the repository
    /// as the directory the caller was in.
    pub cwd: PathBuf,
    /// The worktree's top directory.
    pub root: PathBuf,
    pub branch: String,
    /// The top of the repository it was made from (where the branch is merged).
    pub repo_top: PathBuf,
    /// The commit it started from.
    pub base: String,
}

/// `git worktree add -b troupe/[<label>-]<id> $TROUPE_HOME/worktrees/<repo>-[<label>-]<id>
/// HEAD`, from the repository holding `cwd`. `label` must be safe in a branch name.
pub fn create(cwd: &Path, home: &Path, label: Option<&str>) -> Result<Worktree, WorktreeError> {
    let top = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|reason| {
        WorktreeError::NotARepository {
            dir: cwd.display().to_string(),
            reason,
        }
    })?;
    let top = PathBuf::from(top.trim());
    let base =
        git(&top, &["rev-parse", "--verify", "HEAD"]).map_err(|_| WorktreeError::NoCommit {
            dir: top.display().to_string(),
        })?;
    let id = match label {
        Some(label) => format!("{label}-{}", short_id()),
        None => short_id(),
    };
    let repo = top
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("repo")
        .to_string();
    let parent = home.join("worktrees");
    let root = parent.join(format!("{repo}-{id}"));
    let branch = format!("troupe/{id}");
    std::fs::create_dir_all(&parent).map_err(|err| WorktreeError::CreateDir {
        dir: parent.display().to_string(),
        reason: err.to_string(),
    })?;
    let root_text = root.to_string_lossy().into_owned();
    git(
        &top,
        &[
            "worktree", "add", "--quiet", "-b", &branch, &root_text, "HEAD",
        ],
    )
    .map_err(WorktreeError::Checkout)?;
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
        repo_top: top,
        base: base.trim().to_string(),
    })
}

/// Commits everything changed in the worktree (new files included) to its branch; false
/// when there was nothing to commit. A repository without a configured identity gets
/// Troupe's, so the work is never lost for want of a name.
pub fn commit_all(worktree: &Worktree, message: &str) -> Result<bool, WorktreeError> {
    let dir = &worktree.root;
    let fail = |reason| WorktreeError::Git {
        dir: dir.display().to_string(),
        reason,
    };
    git(dir, &["add", "-A"]).map_err(fail)?;
    if git(dir, &["diff", "--cached", "--quiet"]).is_ok() {
        return Ok(false);
    }
    // No hook runs (`git` pins `core.hooksPath`); `--no-verify` says so here too.
    let mut args: Vec<&str> = Vec::new();
    if git(dir, &["config", "user.email"]).is_err() {
        args.extend([
            "-c",
            "user.name=Troupe",
            "-c",
            "user.email=troupe@localhost",
        ]);
    }
    args.extend(["commit", "--quiet", "--no-verify", "-m", message]);
    git(dir, &args).map_err(fail)?;
    Ok(true)
}

/// `git diff --stat` from the worktree's base to its branch ("no changes" when empty).
pub fn diffstat(worktree: &Worktree) -> Result<String, WorktreeError> {
    let range = format!("{}..{}", worktree.base, worktree.branch);
    let stat = git(&worktree.repo_top, &["diff", "--stat", &range]).map_err(|reason| {
        WorktreeError::Git {
            dir: worktree.repo_top.display().to_string(),
            reason,
        }
    })?;
    let stat = stat.trim_end();
    Ok(if stat.is_empty() {
        "no changes".to_string()
    } else {
        stat.to_string()
    })
}

/// What [`retire`] did with a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retired {
    /// Its branch held nothing the repository's HEAD lacks: worktree and branch removed.
    Removed,
    /// Its branch holds this many commits not merged into HEAD: both kept.
    Kept { unmerged: usize },
}

/// A closed agent's worktree: its last changes committed, then removed with its branch
/// unless the branch holds commits the repository's HEAD has not merged.
pub fn retire(worktree: &Worktree, message: &str) -> Result<Retired, WorktreeError> {
    if worktree.root.is_dir() {
        commit_all(worktree, message)?;
    }
    let top = &worktree.repo_top;
    let fail = |reason| WorktreeError::Git {
        dir: top.display().to_string(),
        reason,
    };
    let range = format!("HEAD..{}", worktree.branch);
    let count = git(top, &["rev-list", "--count", &range]).map_err(fail)?;
    let unmerged = count.trim().parse::<usize>().unwrap_or(usize::MAX);
    if unmerged > 0 {
        return Ok(Retired::Kept { unmerged });
    }
    let root_text = worktree.root.to_string_lossy().into_owned();
    git(top, &["worktree", "remove", "--force", &root_text]).map_err(fail)?;
    git(top, &["branch", "-D", &worktree.branch]).map_err(fail)?;
    Ok(Retired::Removed)
}

/// Runs git in `dir` through the hardened host runner (the repository's config may have
/// been written by a sandboxed command); its trimmed stderr on failure.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    troupe_sandbox::host_git::run(dir, args).map_err(|err| err.to_string())
}

/// 8 hex digits, different on every call (time, pid and a counter).
pub(crate) fn short_id() -> String {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "{:08x}",
        (nanos as u64 ^ u64::from(std::process::id()).rotate_left(32)) as u32
            ^ n.wrapping_mul(0x9e37_79b9)
    )
}
