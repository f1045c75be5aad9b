//! Workspaces carried as a git remote and commit (`[cluster] workspace = "git"`), the
//! requester's side: its HEAD commit pushed to the remote under a ref of its own before a
//! remote thread starts, and the branch the worker pushed back fetched into its repository
//! once the thread ends. The worker's side is [`super::git_checkout`].
//!
//! Everything here runs `git` and waits for it: call it from `spawn_blocking` (or from the
//! binary before the runtime starts), never from an actor handler.

use super::worktree::git;
use std::path::{Component, Path, PathBuf};
use troupe_cluster::wire::GitWorkspace;

/// Prefix of the refs the requesters push their base commits under.
pub const BASE_REF_PREFIX: &str = "refs/troupe/base/";
/// Prefix of every branch a worker pushes back.
pub const BRANCH_PREFIX: &str = "troupe/";

/// Why a git workspace could not be sent, checked out or brought back.
#[derive(Debug, thiserror::Error)]
pub enum GitWorkspaceError {
    #[error(
        "[cluster] workspace = \"git\" needs a Git repository: {dir} is not inside one \
         ({reason}); run from a repository, or set workspace = \"shared\""
    )]
    NotARepository { dir: String, reason: String },
    #[error("{dir} has no commit to send to a worker yet (commit first)")]
    NoCommit { dir: String },
    #[error(
        "git_remote `{remote}` is neither a remote of {repo} nor a URL or an existing path \
         (see `git remote -v`)"
    )]
    UnknownRemote { remote: String, repo: String },
    #[error("cannot push the base commit to git_remote `{remote}` ({url}): {reason}")]
    Push {
        remote: String,
        url: String,
        reason: String,
    },
    #[error("cannot push branch `{branch}` to {url}: {reason}")]
    PushBranch {
        branch: String,
        url: String,
        reason: String,
    },
    #[error("cannot fetch `{what}` from `{remote}`: {reason}")]
    Fetch {
        remote: String,
        what: String,
        reason: String,
    },
    #[error("refused a git workspace: {0}")]
    Refused(String),
    #[error("git failed in {dir}: {reason}")]
    Git { dir: String, reason: String },
    #[error(transparent)]
    Worktree(#[from] super::worktree::WorktreeError),
}

/// The base commit, pushed: what the spawn request carries, and what the requester needs
/// to bring the result back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasePushed {
    pub workspace: GitWorkspace,
    /// The top of the requester's repository (where the result branch is fetched).
    pub repo_top: PathBuf,
    /// `git_remote` as configured (a remote name keeps the repository's own settings for
    /// pushing and fetching).
    pub remote: String,
    /// Paths with changes HEAD does not hold (not carried to the worker).
    pub uncommitted: usize,
    /// For a sub-agent: the task name its branch must carry (`troupe/<label>-<id>`); none
    /// for a whole thread (`troupe/<id>`).
    pub label: Option<String>,
}

impl BasePushed {
    /// What the requester says about changes the worker will not see; none when clean.
    pub fn uncommitted_note(&self) -> Option<String> {
        (self.uncommitted > 0).then(|| {
            format!(
                "{} uncommitted change(s) in {} are not carried to the worker: it works on \
                 commit {} (commit them first to include them)",
                self.uncommitted,
                self.repo_top.display(),
                short(&self.workspace.commit)
            )
        })
    }
}

/// Pushes the HEAD commit of the repository holding `cwd` to `remote` under
/// `refs/troupe/base/<request_id>` (hooks skipped: a ref only Troupe reads).
pub fn push_base(
    cwd: &Path,
    remote: &str,
    request_id: &str,
) -> Result<BasePushed, GitWorkspaceError> {
    check_token(request_id, "request id")?;
    let top = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|reason| {
        GitWorkspaceError::NotARepository {
            dir: cwd.display().to_string(),
            reason,
        }
    })?;
    let top = PathBuf::from(top.trim());
    let commit = git(&top, &["rev-parse", "--verify", "HEAD^{commit}"])
        .map_err(|_| GitWorkspaceError::NoCommit {
            dir: top.display().to_string(),
        })?
        .trim()
        .to_string();
    let url = resolve_remote(&top, remote)?;
    let base_ref = format!("{BASE_REF_PREFIX}{request_id}");
    let refspec = format!("{commit}:{base_ref}");
    git(
        &top,
        &["push", "--quiet", "--no-verify", "--", remote, &refspec],
    )
    .map_err(|reason| GitWorkspaceError::Push {
        remote: remote.to_string(),
        url: redact_url(&url),
        reason,
    })?;
    let status =
        git(&top, &["status", "--porcelain"]).map_err(|reason| GitWorkspaceError::Git {
            dir: top.display().to_string(),
            reason,
        })?;
    let relative = std::fs::canonicalize(cwd)
        .ok()
        .zip(std::fs::canonicalize(&top).ok())
        .and_then(|(cwd, top)| cwd.strip_prefix(top).ok().map(Path::to_path_buf))
        .unwrap_or_default();
    Ok(BasePushed {
        workspace: GitWorkspace {
            remote: url,
            base_ref,
            commit,
            relative,
        },
        repo_top: top,
        remote: remote.to_string(),
        uncommitted: status.lines().filter(|l| !l.trim().is_empty()).count(),
        label: None,
    })
}

/// The worker's branch, brought into the requester's repository as a local branch of the
/// same name, ready to `git merge`; its tip. The branch comes from the network: it is
/// fetched under a quarantine ref first and becomes a branch only when its name is the one
/// a worker gives ([`check_expected_branch`]) and its tip descends from the base commit
/// (else it could be any history the remote holds); an existing branch is never moved.
pub fn fetch_result(pushed: &BasePushed, branch: &str) -> Result<String, GitWorkspaceError> {
    check_expected_branch(branch, pushed.label.as_deref())?;
    let request = pushed
        .workspace
        .base_ref
        .strip_prefix(BASE_REF_PREFIX)
        .unwrap_or("");
    check_token(request, "request id")?;
    let incoming = format!("refs/troupe/incoming/{request}");
    let refspec = format!("+refs/heads/{branch}:{incoming}");
    let top = &pushed.repo_top;
    git(
        top,
        &[
            "fetch",
            "--quiet",
            "--no-tags",
            "--",
            &pushed.remote,
            &refspec,
        ],
    )
    .map_err(|reason| GitWorkspaceError::Fetch {
        remote: pushed.remote.clone(),
        what: branch.to_string(),
        reason,
    })?;
    let checked = (|| {
        let tip = git(
            top,
            &["rev-parse", "--verify", &format!("{incoming}^{{commit}}")],
        )
        .map_err(|reason| git_error(top, reason))?
        .trim()
        .to_string();
        let base = pushed.workspace.commit.as_str();
        if git(top, &["merge-base", "--is-ancestor", base, &tip]).is_err() {
            return Err(GitWorkspaceError::Refused(format!(
                "branch `{branch}` does not descend from the base commit {}",
                short(base)
            )));
        }
        // Created only if absent: the all-zero old value makes git refuse an existing one.
        let zero = "0".repeat(base.len());
        git(
            top,
            &["update-ref", &format!("refs/heads/{branch}"), &tip, &zero],
        )
        .map_err(|reason| git_error(top, reason))?;
        Ok(tip)
    })();
    let _ = git(top, &["update-ref", "-d", &incoming]);
    checked
}

/// The diffstat of `tip` since the base, computed here (the worker's own is not trusted)
/// and made printable.
pub fn local_diffstat(pushed: &BasePushed, tip: &str) -> Result<String, GitWorkspaceError> {
    let top = &pushed.repo_top;
    let stat = git(
        top,
        &[
            "diff",
            "--stat",
            "--no-color",
            &pushed.workspace.commit,
            tip,
            "--",
        ],
    )
    .map_err(|reason| git_error(top, reason))?;
    let stat = printable(stat.trim_end());
    Ok(if stat.trim().is_empty() {
        "no changes".into()
    } else {
        stat
    })
}

fn git_error(dir: &Path, reason: String) -> GitWorkspaceError {
    GitWorkspaceError::Git {
        dir: dir.display().to_string(),
        reason,
    }
}

/// `text` with every control character but the newline shown as `^X` (or `<U+XXXX>`),
/// and the bidi controls likewise: nothing in it can drive a terminal.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        let code = ch as u32;
        match ch {
            '\n' => out.push('\n'),
            c if code < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            '\u{7f}' => out.push_str("^?"),
            _ if (0x80..=0x9f).contains(&code)
                || (0x200e..=0x200f).contains(&code)
                || (0x202a..=0x202e).contains(&code)
                || (0x2066..=0x2069).contains(&code) =>
            {
                out.push_str(&format!("<U+{code:04X}>"));
            }
            c => out.push(c),
        }
    }
    out
}

/// A branch the requester's worker makes: `troupe/<8 hex>` for a whole thread,
/// `troupe/<label>-<8 hex>` for a sub-agent (its task name as the worker writes it).
pub fn check_expected_branch(branch: &str, label: Option<&str>) -> Result<(), GitWorkspaceError> {
    check_branch(branch)?;
    let rest = branch.strip_prefix(BRANCH_PREFIX).unwrap_or("");
    let id = match label.filter(|l| !l.is_empty()) {
        Some(label) => rest
            .strip_prefix(label)
            .and_then(|r| r.strip_prefix('-'))
            .unwrap_or(""),
        None => rest,
    };
    if id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(GitWorkspaceError::Refused(format!(
            "`{}` is not the branch this thread's worker makes",
            printable(branch)
        )))
    }
}

/// Deletes the base ref from the remote once the thread is over (nobody fetches it again).
pub fn drop_base_ref(pushed: &BasePushed) -> Result<(), GitWorkspaceError> {
    let refspec = format!(":{}", pushed.workspace.base_ref);
    git(
        &pushed.repo_top,
        &[
            "push",
            "--quiet",
            "--no-verify",
            "--",
            &pushed.remote,
            &refspec,
        ],
    )
    .map(drop)
    .map_err(|reason| GitWorkspaceError::Push {
        remote: pushed.remote.clone(),
        url: redact_url(&pushed.workspace.remote),
        reason,
    })
}

/// The text a requester gives for a fetched branch (the local worktree's wording).
pub fn fetched_text(branch: &str, repo_top: &Path, diffstat: &str) -> String {
    format!(
        "[worktree] branch `{branch}` (worked on a worker, fetched into {}), changes since \
         the base commit:\n{diffstat}\nMerge them with `git merge {branch}`.",
        repo_top.display()
    )
}

/// The URL (or absolute path) the worker gets for `remote`: a remote of the repository at
/// `top` by name, else a URL, else an existing path (made absolute).
fn resolve_remote(top: &Path, remote: &str) -> Result<String, GitWorkspaceError> {
    if let Ok(url) = git(top, &["remote", "get-url", "--", remote]) {
        return Ok(absolute_if_path(top, url.trim()));
    }
    if looks_like_url(remote) {
        return Ok(remote.to_string());
    }
    let path = top.join(remote);
    if path.exists() {
        return Ok(absolute_if_path(top, remote));
    }
    Err(GitWorkspaceError::UnknownRemote {
        remote: remote.to_string(),
        repo: top.display().to_string(),
    })
}

/// `scheme://…` or scp-like `host:path` (a colon before any slash).
fn looks_like_url(text: &str) -> bool {
    if text.contains("://") {
        return true;
    }
    match (text.find(':'), text.find('/')) {
        (Some(colon), Some(slash)) => colon < slash,
        (Some(_), None) => true,
        _ => false,
    }
}

/// A relative local path is relative to the repository; the worker needs it absolute.
fn absolute_if_path(top: &Path, url: &str) -> String {
    if looks_like_url(url) || Path::new(url).is_absolute() {
        return url.to_string();
    }
    let joined = top.join(url);
    std::fs::canonicalize(&joined)
        .unwrap_or(joined)
        .display()
        .to_string()
}

/// `scheme://user:secret@host/…` shown as `scheme://<credentials>@host/…`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://<credentials>@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// The first 12 characters of a SHA.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// A single name token (letters, digits, `-`, `_`): nothing a ref or a path could be bent by.
pub(crate) fn check_token(text: &str, what: &str) -> Result<(), GitWorkspaceError> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(GitWorkspaceError::Refused(format!(
            "{what} `{text}` is not a plain name"
        )))
    }
}

/// A branch a worker pushed: `troupe/` then name characters, no `..`, no leading `-`.
pub fn check_branch(branch: &str) -> Result<(), GitWorkspaceError> {
    let rest = branch.strip_prefix(BRANCH_PREFIX).unwrap_or("");
    let ok = !rest.is_empty()
        && branch.len() <= 200
        && !branch.contains("..")
        && !rest.starts_with(['-', '/'])
        && !rest.ends_with(['/', '.'])
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'));
    if ok {
        Ok(())
    } else {
        Err(GitWorkspaceError::Refused(format!(
            "`{branch}` is not a branch a worker makes (troupe/<name>)"
        )))
    }
}

/// What a spawn request's workspace must look like before a worker acts on it: the values
/// come from the network and go to `git` and into paths.
pub fn check_request(workspace: &GitWorkspace) -> Result<(), GitWorkspaceError> {
    let refused = |what: String| Err(GitWorkspaceError::Refused(what));
    if workspace.remote.trim().is_empty() || workspace.remote.starts_with('-') {
        return refused(format!("remote `{}`", redact_url(&workspace.remote)));
    }
    if workspace.remote.starts_with("ext::") {
        return refused("the `ext::` transport runs commands".into());
    }
    let id = workspace
        .base_ref
        .strip_prefix(BASE_REF_PREFIX)
        .unwrap_or("");
    check_token(id, "base ref")?;
    let hex = workspace.commit.chars().all(|c| c.is_ascii_hexdigit());
    if !(hex && matches!(workspace.commit.len(), 40 | 64)) {
        return refused(format!("`{}` is not a full commit id", workspace.commit));
    }
    let inside = workspace
        .relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return refused(format!(
            "the directory `{}` is not inside the repository",
            workspace.relative.display()
        ));
    }
    Ok(())
}

/// Once a remote thread is over: its branch fetched into the requester's repository (the
/// text to show: where the branch is and its diffstat) or why not (an error text), and the
/// base ref deleted from the remote.
pub fn bring_back(
    pushed: &BasePushed,
    outcome: Option<&troupe_cluster::wire::WorkspaceOutcome>,
) -> Result<String, String> {
    use troupe_cluster::wire::WorkspaceOutcome;
    let brought = match outcome {
        None => Err(format!(
            "[worktree] the worker sent no branch back: its work on commit {} is not on \
             `{}` (see the worker's log)",
            short(&pushed.workspace.commit),
            pushed.remote
        )),
        Some(WorkspaceOutcome::Failed { error }) => Err(format!(
            "[worktree] the worker could not push its work (it keeps its worktree): {}",
            printable(error)
        )),
        // The worker's diffstat is not shown: the branch's is computed here.
        Some(WorkspaceOutcome::Pushed { branch, .. }) => {
            match fetch_result(pushed, branch).and_then(|tip| local_diffstat(pushed, &tip)) {
                Ok(stat) => Ok(fetched_text(branch, &pushed.repo_top, &stat)),
                Err(err) => Err(format!(
                    "[worktree] the worker named branch `{}` on `{}`, but it was not fetched into \
                 {}: {}",
                    printable(branch),
                    pushed.remote,
                    pushed.repo_top.display(),
                    printable(&err.to_string())
                )),
            }
        }
    };
    if let Err(err) = drop_base_ref(pushed) {
        tracing::warn!(%err, "the base ref of a remote thread was not deleted");
    }
    brought
}
