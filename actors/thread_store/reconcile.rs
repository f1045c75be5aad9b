//! Bringing the index in line with the rollout files, which are the source of truth.
//!
//! Every `rollout-*.jsonl` under `sessions/` and `archived_sessions/` is looked at (a `stat`
//! each); only files whose path or size differs from their index entry are read again. Index
//! entries whose file is gone are dropped. Files that cannot be read are reported, never
//! touched.

use super::summary::{is_archived, summarize};
use super::{StoreError, ThreadStore};
use crate::rollout_recorder::{loader, lock};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use troupe_messages::threads::{ThreadStatus, ThreadSummary};

/// What a reconcile did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Rollouts looked at.
    pub files: usize,
    /// Entries written (new or changed files).
    pub refreshed: usize,
    /// Entries dropped because their file is gone.
    pub removed: usize,
    /// Files that could not be read, with the reason.
    pub unreadable: Vec<String>,
}

/// Every rollout file under `home`, in `sessions/` and `archived_sessions/`.
pub fn rollout_files(home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in ["sessions", "archived_sessions"] {
        collect(&home.join(dir), &mut found);
    }
    found.sort();
    found
}

fn collect(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(&path, found);
        } else if is_rollout_name(&path) {
            found.push(path);
        }
    }
}

fn is_rollout_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The summary of one file, read from disk (status `running` while a live process holds it).
pub fn summarize_file(home: &Path, path: &Path) -> Result<ThreadSummary, loader::RolloutError> {
    let rollout = loader::load(path)?;
    let mut summary = summarize(&rollout, is_archived(home, path));
    if lock::holder(path).is_some() {
        summary.status = ThreadStatus::Running;
    }
    Ok(summary)
}

/// Summaries of every rollout, read from the files alone (no index), newest first.
pub fn scan(home: &Path) -> (Vec<ThreadSummary>, Vec<String>) {
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    for path in rollout_files(home) {
        match summarize_file(home, &path) {
            Ok(summary) => out.push(summary),
            Err(err) => unreadable.push(err.to_string()),
        }
    }
    sort_newest_first(&mut out);
    (out, unreadable)
}

/// Most recently updated first; ties by id.
pub fn sort_newest_first(summaries: &mut [ThreadSummary]) {
    summaries.sort_by(|a, b| {
        b.updated_at_ms
            .cmp(&a.updated_at_ms)
            .then_with(|| b.id.cmp(&a.id))
    });
}

/// Updates the index from the files under `home`.
pub fn reconcile(store: &ThreadStore, home: &Path) -> Result<ReconcileReport, StoreError> {
    let mut report = ReconcileReport::default();
    let mut indexed: HashMap<PathBuf, ThreadSummary> = store
        .all()?
        .into_iter()
        .map(|s| (s.rollout_path.clone(), s))
        .collect();
    for path in rollout_files(home) {
        report.files += 1;
        let size = std::fs::metadata(&path).map(|m| m.len()).ok();
        let known = indexed.remove(&path);
        let running = lock::holder(&path).is_some();
        let fresh = known.as_ref().is_some_and(|s| {
            Some(s.rollout_bytes) == size && (s.status == ThreadStatus::Running) == running
        });
        if fresh {
            continue;
        }
        match summarize_file(home, &path) {
            Ok(summary) => {
                if let Some(old) = known.filter(|old| old.id != summary.id) {
                    store.remove(old.id)?;
                }
                store.put(&summary)?;
                report.refreshed += 1;
            }
            Err(err) => report.unreadable.push(err.to_string()),
        }
    }
    // Whatever is left has no file any more (moved files were re-added under their new path).
    for (_, gone) in indexed {
        let moved = store
            .get(&gone.id.to_string())?
            .is_some_and(|now| now.rollout_path != gone.rollout_path);
        if !moved {
            store.remove(gone.id)?;
            report.removed += 1;
        }
    }
    store.flush()?;
    Ok(report)
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
