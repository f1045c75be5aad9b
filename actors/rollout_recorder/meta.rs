//! The session-meta line of a new rollout: identity, settings digest and Git state.
//!
//! Git state is read from the repository files (`HEAD`, refs, `packed-refs`) rather than by
//! running `git`, so starting a thread costs no process spawn and works without git installed.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::rollout::{GitInfo, SessionMeta, ROLLOUT_FORMAT_VERSION};
use troupe_messages::settings::SessionSettings;

/// Meta of a thread starting now with `settings`.
pub fn session_meta(
    thread_id: ThreadId,
    settings: &SessionSettings,
    parent: Option<(ThreadId, TurnId)>,
) -> SessionMeta {
    SessionMeta {
        version: ROLLOUT_FORMAT_VERSION,
        thread_id,
        parent_thread_id: parent.map(|(id, _)| id),
        forked_at_turn: parent.map(|(_, turn)| turn),
        cwd: settings.cwd.clone(),
        model: settings.model.clone(),
        model_provider: settings.provider.id.clone(),
        instructions_digest: Some(digest(&settings.base_instructions)),
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        created_at: super::path::now_rfc3339(),
        git: git_info(&settings.cwd),
        agent: None,
    }
}

/// SHA-256 of `text`, lowercase hex.
pub fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Branch and commit of the repository containing `dir`, if any.
pub fn git_info(dir: &Path) -> Option<GitInfo> {
    let git_dir = dir.ancestors().find_map(|d| git_dir_of(&d.join(".git")))?;
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let common = common_dir(&git_dir);
    match head.strip_prefix("ref: ") {
        Some(reference) => Some(GitInfo {
            branch: Some(
                reference
                    .strip_prefix("refs/heads/")
                    .unwrap_or(reference)
                    .to_string(),
            ),
            commit: resolve_ref(&git_dir, &common, reference),
        }),
        None => Some(GitInfo {
            branch: None,
            commit: Some(head.to_string()),
        }),
    }
}

/// `.git` is a directory, or a file `gitdir: PATH` (worktrees, submodules).
fn git_dir_of(dot_git: &Path) -> Option<PathBuf> {
    if dot_git.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    let target = PathBuf::from(target);
    Some(if target.is_absolute() {
        target
    } else {
        dot_git.parent()?.join(target)
    })
}

/// A linked worktree keeps its refs in the main repository (`commondir`).
fn common_dir(git_dir: &Path) -> PathBuf {
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => git_dir.join(text.trim()),
        Err(_) => git_dir.to_path_buf(),
    }
}

fn resolve_ref(git_dir: &Path, common: &Path, reference: &str) -> Option<String> {
    for dir in [git_dir, common] {
        if let Ok(text) = std::fs::read_to_string(dir.join(reference)) {
            return Some(text.trim().to_string());
        }
    }
    let packed = std::fs::read_to_string(common.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (hash, name) = line.split_once(' ')?;
        (name == reference).then(|| hash.to_string())
    })
}

#[cfg(test)]
#[path = "meta_tests.rs"]
mod tests;
