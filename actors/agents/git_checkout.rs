//! Workspaces carried as a git remote and commit, the worker's side: the requester's base
//! commit fetched into a cache under the worker's `TROUPE_HOME` (`git-cache/<hash of the
//! remote>`, a bare repository kept across threads), checked out in a worktree of its own
//! on branch `troupe/<label>-<id>` under `$TROUPE_HOME/worktrees`, and once the thread's
//! turn is over its work committed (the commit logic of local worktrees), pushed to the
//! same remote and the worktree removed.
//!
//! Everything here runs `git` and waits for it: call it from `spawn_blocking`.

use super::git_workspace::{check_request, GitWorkspaceError};
use super::worktree::{commit_all, diffstat, git, short_id, Worktree};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use troupe_cluster::wire::GitWorkspace;

/// One git command at a time on the caches of this process: two threads of the same
/// remote fetch into, and add worktrees to, the same repository.
static CACHE_LOCK: Mutex<()> = Mutex::new(());

/// A worktree checked out for one remote thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCheckout {
    /// The worktree (its `repo_top` is the cache).
    pub worktree: Worktree,
    /// Where the branch goes back to.
    pub remote: String,
    /// The base ref fetched into the cache (deleted there with the worktree).
    pub base_ref: String,
}

/// Fetches the request's base commit into the cache and checks it out in a new worktree
/// on `troupe/[<label>-]<id>`; the thread runs in `worktree.cwd`.
pub fn check_out(
    home: &Path,
    workspace: &GitWorkspace,
    label: Option<&str>,
) -> Result<RemoteCheckout, GitWorkspaceError> {
    check_request(workspace)?;
    let cache = cache_dir(home, &workspace.remote);
    let _one_at_a_time = CACHE_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !cache.join("HEAD").is_file() {
        std::fs::create_dir_all(&cache).map_err(|err| GitWorkspaceError::Git {
            dir: cache.display().to_string(),
            reason: format!("cannot create the git cache: {err}"),
        })?;
        git(&cache, &["init", "--quiet", "--bare"]).map_err(|reason| git_failed(&cache, reason))?;
    }
    let refspec = format!("+{0}:{0}", workspace.base_ref);
    let fetch = [
        "fetch",
        "--quiet",
        "--no-tags",
        "--",
        workspace.remote.as_str(),
        refspec.as_str(),
    ];
    git(&cache, &fetch).map_err(|reason| GitWorkspaceError::Fetch {
        remote: super::git_workspace::redact_url(&workspace.remote),
        what: workspace.base_ref.clone(),
        reason,
    })?;
    let fetched = git(&cache, &["rev-parse", "--verify", &workspace.base_ref])
        .map_err(|reason| git_failed(&cache, reason))?;
    if fetched.trim() != workspace.commit {
        return Err(GitWorkspaceError::Refused(format!(
            "{} is {} on the remote, not the requested {}",
            workspace.base_ref,
            fetched.trim(),
            workspace.commit
        )));
    }
    let id = match label.map(branch_label).filter(|l| !l.is_empty()) {
        Some(label) => format!("{label}-{}", short_id()),
        None => short_id(),
    };
    let branch = format!("troupe/{id}");
    let parent = home.join("worktrees");
    std::fs::create_dir_all(&parent).map_err(|err| GitWorkspaceError::Git {
        dir: parent.display().to_string(),
        reason: format!("cannot create the worktrees directory: {err}"),
    })?;
    let root = parent.join(format!("remote-{id}"));
    let root_text = root.to_string_lossy().into_owned();
    let add = [
        "worktree",
        "add",
        "--quiet",
        "-b",
        branch.as_str(),
        root_text.as_str(),
        workspace.commit.as_str(),
    ];
    git(&cache, &add).map_err(|reason| git_failed(&cache, reason))?;
    let mut cwd = root.join(&workspace.relative);
    if !cwd.is_dir() {
        // The requester's directory is not tracked (or is ignored): the worktree's top.
        cwd = root.clone();
    }
    Ok(RemoteCheckout {
        worktree: Worktree {
            cwd,
            root,
            branch,
            repo_top: cache,
            base: workspace.commit.clone(),
        },
        remote: workspace.remote.clone(),
        base_ref: workspace.base_ref.clone(),
    })
}

/// The thread's work, delivered: committed on its branch, pushed to the remote; the
/// worktree is then removed (the remote holds the work). Returns the diffstat since the
/// base. On a failure the worktree stays, so nothing is lost.
pub fn deliver(checkout: &RemoteCheckout, message: &str) -> Result<String, GitWorkspaceError> {
    let worktree = &checkout.worktree;
    commit_all(worktree, message)?;
    let stat = diffstat(worktree)?;
    let cache = &worktree.repo_top;
    let refspec = format!("refs/heads/{0}:refs/heads/{0}", worktree.branch);
    let push = [
        "push",
        "--quiet",
        "--no-verify",
        "--",
        checkout.remote.as_str(),
        refspec.as_str(),
    ];
    git(cache, &push).map_err(|reason| GitWorkspaceError::PushBranch {
        branch: worktree.branch.clone(),
        url: super::git_workspace::redact_url(&checkout.remote),
        reason,
    })?;
    remove(checkout)?;
    Ok(stat)
}

/// Removes the worktree, its branch and the base ref from the cache (the cache stays).
pub fn remove(checkout: &RemoteCheckout) -> Result<(), GitWorkspaceError> {
    let worktree = &checkout.worktree;
    let cache = &worktree.repo_top;
    let _one_at_a_time = CACHE_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let root_text = worktree.root.to_string_lossy().into_owned();
    git(cache, &["worktree", "remove", "--force", &root_text])
        .map_err(|reason| git_failed(cache, reason))?;
    git(cache, &["branch", "-D", &worktree.branch]).map_err(|reason| git_failed(cache, reason))?;
    // Another thread of the same request (a take-over) may have deleted it already.
    let _ = git(cache, &["update-ref", "-d", &checkout.base_ref]);
    Ok(())
}

/// `$TROUPE_HOME/git-cache/<first 16 hex digits of SHA-256(remote)>`.
pub fn cache_dir(home: &Path, remote: &str) -> PathBuf {
    let digest = Sha256::digest(remote.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    home.join("git-cache").join(hex)
}

/// A task name as a branch component: letters, digits, `_` and `-`, at most 40.
pub(crate) fn branch_label(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .take(40)
        .collect::<String>()
        .trim_start_matches('-')
        .to_string()
}

fn git_failed(dir: &Path, reason: String) -> GitWorkspaceError {
    GitWorkspaceError::Git {
        dir: dir.display().to_string(),
        reason,
    }
}
