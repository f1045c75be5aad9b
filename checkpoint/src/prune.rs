//! Keeping the store bounded: checkpoints older than `max_age_days` go, then the oldest
//! until the store fits in `max_total_mb`; then objects no checkpoint names. The newest two
//! checkpoints of every thread stay whatever their age (the next checkpoint's stat cache
//! and the tree a rewind compares against come from them).

use crate::error::CheckpointError;
use crate::manifest::{Manifest, Node};
use crate::objects::{now_ms, Store};
use std::collections::{HashMap, HashSet};

/// An object younger than this is never removed: another process may be writing the
/// checkpoint that names it.
const OBJECT_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

#[derive(Debug, Clone, Copy)]
pub struct PruneLimits {
    pub max_age_days: u64,
    pub max_total_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    pub manifests_removed: usize,
    pub objects_removed: usize,
    pub bytes_kept: u64,
}

/// Prunes `store` down to `limits`.
pub fn prune(store: &Store, limits: PruneLimits) -> Result<PruneReport, CheckpointError> {
    let mut report = PruneReport::default();
    let protected = protected_ids(store)?;
    let manifests_dir = store.dir().join("manifests");
    let mut ids: Vec<String> = read_dir_names(&manifests_dir)
        .into_iter()
        .filter_map(|name| {
            name.strip_suffix(".delta.json")
                .or_else(|| name.strip_suffix(".json"))
                .map(str::to_string)
        })
        .collect();
    ids.sort();
    ids.dedup();
    let mut manifests: Vec<(String, u64)> = ids
        .into_iter()
        .map(|id| {
            let created = id
                .split('-')
                .next()
                .and_then(|ms| ms.parse().ok())
                .unwrap_or(0);
            (id, created)
        })
        .collect();
    manifests.sort_by_key(|(_, created)| *created);
    let max_age_ms = limits.max_age_days.saturating_mul(86_400_000);
    let now = now_ms();
    let mut kept: Vec<(String, Manifest)> = Vec::new();
    let mut old: Vec<String> = Vec::new();
    for (id, created) in manifests {
        if !protected.contains(&id) && now.saturating_sub(created) > max_age_ms {
            old.push(id);
        } else if let Ok(manifest) = store.load_manifest(&id) {
            kept.push((id, manifest));
        }
    }
    for id in &old {
        remove_manifest(store, id, &kept, &mut report);
    }
    // Reference counts and sizes of the objects the kept checkpoints name.
    let mut refs: HashMap<String, (usize, u64)> = HashMap::new();
    for (_, manifest) in &kept {
        for (hash, size) in objects_of(manifest) {
            refs.entry(hash).or_insert((0, size)).0 += 1;
        }
    }
    let mut total: u64 = refs.values().map(|(_, size)| size).sum();
    for (id, manifest) in &kept {
        if total <= limits.max_total_bytes {
            break;
        }
        if protected.contains(id) {
            continue;
        }
        remove_manifest(store, id, &kept, &mut report);
        for (hash, _) in objects_of(manifest) {
            if let Some(entry) = refs.get_mut(&hash) {
                entry.0 -= 1;
                if entry.0 == 0 {
                    total = total.saturating_sub(entry.1);
                    refs.remove(&hash);
                }
            }
        }
    }
    report.bytes_kept = total;
    let named: HashSet<&String> = refs.keys().collect();
    let objects = store.dir().join("objects");
    for head in read_dir_names(&objects) {
        for tail in read_dir_names(&objects.join(&head)) {
            let hash = format!("{head}{tail}");
            if named.contains(&hash) {
                continue;
            }
            let path = objects.join(&head).join(&tail);
            let young = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_none_or(|age| age < OBJECT_GRACE);
            if !young && std::fs::remove_file(&path).is_ok() {
                report.objects_removed += 1;
            }
        }
    }
    Ok(report)
}

/// Removes checkpoint `id`; the kept ones written as changes from it are first written
/// whole (if that fails, `id` stays: they need it).
fn remove_manifest(store: &Store, id: &str, kept: &[(String, Manifest)], report: &mut PruneReport) {
    for (dependent, manifest) in kept {
        if manifest.written.base.as_deref() == Some(id) {
            if store.write_manifest(manifest).is_err() {
                return;
            }
            let _ = std::fs::remove_file(store.delta_path(dependent));
        }
    }
    let whole = std::fs::remove_file(store.manifest_path(id)).is_ok();
    let delta = std::fs::remove_file(store.delta_path(id)).is_ok();
    if whole || delta {
        report.manifests_removed += 1;
    }
}

fn objects_of(manifest: &Manifest) -> HashSet<(String, u64)> {
    manifest
        .roots
        .iter()
        .flat_map(|root| root.entries.values())
        .filter_map(|node| match node {
            Node::File { hash, size, .. } => Some((hash.clone(), *size)),
            _ => None,
        })
        .collect()
}

/// The newest two checkpoints of every thread.
fn protected_ids(store: &Store) -> Result<HashSet<String>, CheckpointError> {
    let mut ids = HashSet::new();
    for name in read_dir_names(&store.dir().join("threads")) {
        let Some(thread) = name.strip_suffix(".jsonl") else {
            continue;
        };
        let lines = store.read_index(thread)?;
        let mut newest: Vec<String> = Vec::new();
        for line in lines.iter().rev() {
            if let Some(id) = &line.checkpoint {
                if !newest.contains(id) {
                    newest.push(id.clone());
                }
            }
            if newest.len() == 2 {
                break;
            }
        }
        ids.extend(newest);
    }
    Ok(ids)
}

fn read_dir_names(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}
