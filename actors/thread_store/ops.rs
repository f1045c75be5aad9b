//! Thread operations on files + index: find, fork, archive, unarchive, delete.
//!
//! The files come first: each operation changes the rollout files, then the index (when one
//! is open). Without an index (locked by another process) they still work from the files; the
//! next reconcile catches the index up. Nothing here touches a thread a live process holds.

use super::reconcile::{rollout_files, summarize_file};
use super::{StoreError, ThreadStore};
use crate::rollout_recorder::loader::{self, RolloutError};
use crate::rollout_recorder::meta::git_info;
use crate::rollout_recorder::path::{now_rfc3339, rollout_path};
use crate::rollout_recorder::{encode, lock};
use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::rollout::{RolloutLine, RolloutRecord, SessionMeta};
use troupe_messages::threads::ThreadSummary;

#[derive(Debug, Error)]
pub enum OpsError {
    #[error("no thread {0}; `troupe list --all` shows the known threads")]
    Unknown(String),
    #[error("`{prefix}` matches several threads ({matches}); give more of the id")]
    Ambiguous { prefix: String, matches: String },
    #[error("thread {id} is open in process {pid}; close it first")]
    InUse { id: String, pid: u32 },
    #[error("thread {0} is already archived")]
    AlreadyArchived(String),
    #[error("thread {0} is not archived")]
    NotArchived(String),
    #[error("thread {id} has {turns} turn(s); --at-turn must be between 1 and {turns}")]
    NoSuchTurn { id: String, turns: u64 },
    #[error(transparent)]
    Rollout(#[from] RolloutError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> OpsError + 'a {
    move |source| OpsError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// The thread whose id is `query` or starts with it: a prefix scan of the index, then — when
/// the index has no live match (another process held it, a file moved) — the files.
pub fn find(
    home: &Path,
    store: Option<&ThreadStore>,
    query: &str,
) -> Result<ThreadSummary, OpsError> {
    let query_lower = query.to_ascii_lowercase();
    if let (Some(store), false) = (store, query.is_empty()) {
        let mut live: Vec<ThreadSummary> = store
            .with_prefix(&query_lower)?
            .into_iter()
            .filter(|found| found.rollout_path.exists())
            .collect();
        match live.len() {
            0 => {}
            1 => return Ok(live.remove(0)),
            _ => {
                return Err(OpsError::Ambiguous {
                    prefix: query.to_string(),
                    matches: live
                        .iter()
                        .map(|s| s.id.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                })
            }
        }
    }
    let matches: Vec<PathBuf> = rollout_files(home)
        .into_iter()
        .filter(|path| {
            file_thread_id(path).is_some_and(|id| !query.is_empty() && id.starts_with(&query_lower))
        })
        .collect();
    match matches.as_slice() {
        [] => Err(OpsError::Unknown(query.to_string())),
        [one] => Ok(summarize_file(home, one)?),
        many => Err(OpsError::Ambiguous {
            prefix: query.to_string(),
            matches: many
                .iter()
                .filter_map(|p| file_thread_id(p))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The thread id in a rollout file name (`rollout-<time>-<uuid>.jsonl`).
pub fn file_thread_id(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let id = name.get(name.len().checked_sub(36)?..)?;
    id.parse::<ThreadId>().ok().map(|id| id.to_string())
}

/// Refuses a thread a live process holds; a stale lock (dead pid) is removed, as it would
/// be taken over anyway and must not be left behind when the rollout moves.
pub(crate) fn ensure_not_running(summary: &ThreadSummary) -> Result<(), OpsError> {
    let rollout = summary.rollout_path.as_path();
    match lock::holder(rollout) {
        Some(pid) => Err(OpsError::InUse {
            id: summary.id.to_string(),
            pid,
        }),
        None => {
            let _ = std::fs::remove_file(lock::lock_path(rollout));
            Ok(())
        }
    }
}

pub(crate) fn refresh(
    home: &Path,
    store: Option<&ThreadStore>,
    path: &Path,
) -> Result<ThreadSummary, OpsError> {
    let summary = summarize_file(home, path)?;
    if let Some(store) = store {
        store.put(&summary)?;
        store.flush()?;
    }
    Ok(summary)
}

/// Moves a thread's rollout to `archived_sessions/`.
pub fn archive(
    home: &Path,
    store: Option<&ThreadStore>,
    query: &str,
) -> Result<ThreadSummary, OpsError> {
    let summary = find(home, store, query)?;
    if summary.archived {
        return Err(OpsError::AlreadyArchived(summary.id.to_string()));
    }
    ensure_not_running(&summary)?;
    let from = summary.rollout_path;
    let dir = home.join("archived_sessions");
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    let to = dir.join(from.file_name().unwrap_or_default());
    std::fs::rename(&from, &to).map_err(io("cannot move", &from))?;
    refresh(home, store, &to)
}

/// Moves an archived rollout back under `sessions/YYYY/MM/DD/` (its creation date).
pub fn unarchive(
    home: &Path,
    store: Option<&ThreadStore>,
    query: &str,
) -> Result<ThreadSummary, OpsError> {
    let summary = find(home, store, query)?;
    if !summary.archived {
        return Err(OpsError::NotArchived(summary.id.to_string()));
    }
    let from = summary.rollout_path;
    let name = from.file_name().unwrap_or_default().to_os_string();
    let date = name
        .to_str()
        .and_then(|n| n.strip_prefix("rollout-"))
        .and_then(|n| n.get(..10))
        .map(|d| d.split('-').map(str::to_string).collect::<Vec<_>>())
        .filter(|parts| parts.len() == 3);
    let mut dir = home.join("sessions");
    for part in date.unwrap_or_default() {
        dir.push(part);
    }
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    let to = dir.join(name);
    std::fs::rename(&from, &to).map_err(io("cannot move", &from))?;
    refresh(home, store, &to)
}

/// Deletes a thread's rollout and its index entry.
pub fn delete(
    home: &Path,
    store: Option<&ThreadStore>,
    query: &str,
) -> Result<ThreadSummary, OpsError> {
    let summary = find(home, store, query)?;
    ensure_not_running(&summary)?;
    let path = summary.rollout_path.clone();
    std::fs::remove_file(&path).map_err(io("cannot delete", &path))?;
    if let Some(store) = store {
        store.remove(summary.id)?;
        store.flush()?;
    }
    Ok(summary)
}

/// The lines of a rollout up to and including turn `at_turn` (all of them when `None`).
pub fn lines_through_turn(lines: &[RolloutLine], at_turn: Option<u64>) -> Vec<RolloutLine> {
    let Some(limit) = at_turn else {
        return lines.to_vec();
    };
    lines
        .iter()
        .take_while(
            |line| !matches!(&line.record, RolloutRecord::TurnContext(c) if c.turn_id.0 > limit),
        )
        .cloned()
        .collect()
}

/// A new thread whose history is the source's through turn `at_turn`; the parent is recorded.
pub fn fork(
    home: &Path,
    store: Option<&ThreadStore>,
    query: &str,
    at_turn: Option<u64>,
) -> Result<ThreadSummary, OpsError> {
    fork_into(home, store, query, at_turn, None)
}

/// [`fork`], writing the new rollout under `destination` instead of `home` (an ephemeral
/// run's private directory; the fork then gets no index entry).
pub fn fork_into(
    home: &Path,
    store: Option<&ThreadStore>,
    query: &str,
    at_turn: Option<u64>,
    destination: Option<&Path>,
) -> Result<ThreadSummary, OpsError> {
    let source = find(home, store, query)?;
    let loaded = loader::load(&source.rollout_path)?;
    // A newer format may record what this build cannot replay: copying it would lose it, and
    // the fork's meta would claim the newer format for lines this build wrote.
    loader::check_writable(&loaded)?;
    let turns = crate::rollout_recorder::replay::replay(&loaded.lines)
        .tracker
        .turns;
    let last_turn = match at_turn {
        Some(n) if n == 0 || n > turns => {
            return Err(OpsError::NoSuchTurn {
                id: source.id.to_string(),
                turns,
            })
        }
        Some(n) => n,
        None => turns,
    };
    let thread_id = ThreadId::new();
    let meta = SessionMeta {
        thread_id,
        parent_thread_id: Some(loaded.meta.thread_id),
        forked_at_turn: Some(TurnId(last_turn)),
        created_at: now_rfc3339(),
        git: git_info(&loaded.meta.cwd).or(loaded.meta.git.clone()),
        // A fork is a thread of its own, not a member of the source's agent tree.
        agent: None,
        ..loaded.meta.clone()
    };
    let mut lines = vec![RolloutLine {
        timestamp: meta.created_at.clone(),
        record: RolloutRecord::SessionMeta(meta),
    }];
    lines.extend(lines_through_turn(&loaded.lines, Some(last_turn)));
    let bytes = encode(&lines).map_err(|err| {
        OpsError::Rollout(RolloutError::NotARollout {
            path: loaded.path.clone(),
            reason: err.to_string(),
        })
    })?;
    let base = destination.unwrap_or(home);
    let path = rollout_path(base, thread_id);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
    }
    write_new(&path, &bytes)?;
    match destination {
        Some(_) => refresh(base, None, &path),
        None => refresh(home, store, &path),
    }
}

/// Writes a new file durably: temp file, fsync, rename.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), OpsError> {
    use std::io::Write;
    let tmp = path.with_extension("jsonl.tmp");
    let mut file = std::fs::File::create(&tmp).map_err(io("cannot create", &tmp))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_data())
        .map_err(io("cannot write", &tmp))?;
    std::fs::rename(&tmp, path).map_err(io("cannot create", path))
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
