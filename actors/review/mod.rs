//! Code review runs (no actor): what is reviewed (`ReviewTarget`, checked against the
//! repository with `git`), the request the model gets (`prompt`), and its answer checked and
//! rendered (`output`). Shared by `troupe review` / `exec review` and the app-server's
//! `review/start`.

pub mod output;
pub mod prompt;
pub mod work_tree;

use crate::agents::worktree::git;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewTarget {
    /// Staged, unstaged and untracked changes of the work tree.
    Uncommitted,
    /// The current branch against `branch`, from their merge base.
    BaseBranch { branch: String },
    /// The changes one commit introduced.
    Commit { sha: String, title: Option<String> },
    /// Free-form review instructions.
    Custom { instructions: String },
}

/// The request of a review run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRequest {
    /// The user message naming what to review.
    pub prompt: String,
    /// A short description for people (`current changes`, `commit abc123`).
    pub label: String,
}

/// Why a target cannot be reviewed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ReviewTargetError {
    #[error(
        "{dir} is not inside a Git repository ({reason}); a review reads the changes from Git"
    )]
    NotARepository { dir: PathBuf, reason: String },
    #[error("no such branch in the repository at {repo}")]
    NoSuchBranch { repo: String },
    #[error("no merge base with HEAD ({reason})")]
    NoMergeBase { reason: String },
    #[error("not a commit in the repository at {repo}")]
    NotACommit { repo: String },
    #[error("not a branch or commit name")]
    NotAName,
    #[error("the review instructions are empty")]
    EmptyInstructions,
}

/// Checks `target` against the repository at `cwd` and builds the request. Runs `git`
/// (blocking): call it off the async runtime's workers.
pub fn resolve(target: &ReviewTarget, cwd: &Path) -> Result<ReviewRequest, ReviewTargetError> {
    let top = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|reason| {
        ReviewTargetError::NotARepository {
            dir: cwd.to_path_buf(),
            reason,
        }
    })?;
    let repo = top.trim().to_string();
    match target {
        ReviewTarget::Uncommitted => Ok(ReviewRequest {
            prompt: prompt::uncommitted(),
            label: "current changes".into(),
        }),
        ReviewTarget::BaseBranch { branch } => {
            refuse_option_like(branch)?;
            resolve_commit(cwd, branch)
                .map_err(|_| ReviewTargetError::NoSuchBranch { repo: repo.clone() })?;
            let merge_base = git(cwd, &["merge-base", "HEAD", branch])
                .map_err(|reason| ReviewTargetError::NoMergeBase { reason })?;
            Ok(ReviewRequest {
                prompt: prompt::base_branch(branch, merge_base.trim()),
                label: format!("changes against '{branch}'"),
            })
        }
        ReviewTarget::Commit { sha, title } => {
            refuse_option_like(sha)?;
            let full = resolve_commit(cwd, sha)
                .map_err(|_| ReviewTargetError::NotACommit { repo: repo.clone() })?;
            Ok(ReviewRequest {
                prompt: prompt::commit(&full, title.as_deref()),
                label: match title {
                    Some(title) => format!("commit {sha}: {title}"),
                    None => format!("commit {sha}"),
                },
            })
        }
        ReviewTarget::Custom { instructions } => {
            if instructions.trim().is_empty() {
                return Err(ReviewTargetError::EmptyInstructions);
            }
            Ok(ReviewRequest {
                prompt: instructions.clone(),
                label: instructions.clone(),
            })
        }
    }
}

/// A value starting with `-` would be read by git as an option.
fn refuse_option_like(value: &str) -> Result<(), ReviewTargetError> {
    if value.starts_with('-') || value.trim().is_empty() {
        return Err(ReviewTargetError::NotAName);
    }
    Ok(())
}

/// The full hash of the commit `rev` names.
fn resolve_commit(dir: &Path, rev: &str) -> Result<String, String> {
    git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map(|sha| sha.trim().to_string())
}
