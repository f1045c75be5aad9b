//! Checkpoints written as their changes from an earlier one: `manifests/<id>.delta.json`
//! holds the base's id and, per root, only the paths whose entry differs (stat key
//! included). A turn that changed ten files of a 10,000-file tree then stores ten entries,
//! not ten thousand. At most [`MAX_CHAIN`] deltas lead to a manifest written whole, so
//! loading one reads a bounded number of files; pruning a base first writes the deltas on
//! it whole ([`crate::prune`]).

use crate::error::CheckpointError;
use crate::manifest::{Manifest, Node, RootState, Skipped, Written, MANIFEST_VERSION};
use crate::objects::{write_atomically, Store};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Deltas in a row at most before the next checkpoint is written whole (each is a file a
/// load reads).
const MAX_CHAIN: u32 = 256;

#[derive(Serialize, Deserialize)]
struct DeltaFile {
    version: u32,
    id: String,
    created_ms: u64,
    base: String,
    chain: u32,
    /// The bytes of the chain's deltas before this one.
    #[serde(default)]
    chain_bytes: u64,
    roots: Vec<RootDelta>,
}

#[derive(Serialize, Deserialize)]
struct RootDelta {
    root: PathBuf,
    /// Path → its entry now; `None`: gone.
    changed: BTreeMap<String, Option<Node>>,
    skipped: Vec<Skipped>,
}

impl Store {
    pub(crate) fn delta_path(&self, id: &str) -> PathBuf {
        self.dir()
            .join("manifests")
            .join(format!("{id}.delta.json"))
    }

    /// Writes `manifest` durably, as its changes from `base` when that is on disk, covers
    /// the same roots and most entries did not change, and the chain of deltas since the
    /// last checkpoint written whole is short and smaller than that one (so writing it
    /// whole again costs at most what the deltas did: the store grows by about the changed
    /// bytes); whole otherwise. Records on `manifest` how it was written.
    pub fn write_manifest_over(
        &self,
        manifest: &mut Manifest,
        base: Option<&Manifest>,
    ) -> Result<(), CheckpointError> {
        let corrupt = |err: serde_json::Error| CheckpointError::Corrupt {
            id: manifest.id.clone(),
            reason: err.to_string(),
        };
        let (path, bytes, written) = match base.and_then(|base| self.delta_of(manifest, base)) {
            Some((delta, whole_bytes)) => {
                let bytes = serde_json::to_vec(&delta).map_err(corrupt)?;
                let written = Written {
                    chain: delta.chain,
                    chain_bytes: delta.chain_bytes + bytes.len() as u64,
                    whole_bytes,
                    base: Some(delta.base),
                };
                (self.delta_path(&manifest.id), bytes, written)
            }
            None => {
                let bytes = serde_json::to_vec(&*manifest).map_err(corrupt)?;
                let written = Written {
                    whole_bytes: bytes.len() as u64,
                    ..Written::default()
                };
                (self.manifest_path(&manifest.id), bytes, written)
            }
        };
        write_atomically(&self.dir().join("tmp"), &path, &bytes)?;
        manifest.written = written;
        Ok(())
    }

    fn delta_of(&self, manifest: &Manifest, base: &Manifest) -> Option<(DeltaFile, u64)> {
        let written = &base.written;
        let chain = written.chain + 1;
        if written.whole_bytes == 0 || written.chain_bytes >= written.whole_bytes {
            return None;
        }
        let same_roots = manifest.roots.len() == base.roots.len()
            && manifest
                .roots
                .iter()
                .zip(&base.roots)
                .all(|(a, b)| a.root == b.root);
        if chain > MAX_CHAIN || !same_roots || !self.manifest_exists(&base.id) {
            return None;
        }
        let mut total = 0;
        let mut changes = 0;
        let roots: Vec<RootDelta> = manifest
            .roots
            .iter()
            .zip(&base.roots)
            .map(|(now, before)| {
                total += now.entries.len();
                let changed = changed_entries(before, now);
                changes += changed.len();
                RootDelta {
                    root: now.root.clone(),
                    changed,
                    skipped: now.skipped.clone(),
                }
            })
            .collect();
        (changes * 4 <= total.max(1)).then(|| {
            let delta = DeltaFile {
                version: MANIFEST_VERSION,
                id: manifest.id.clone(),
                created_ms: manifest.created_ms,
                base: base.id.clone(),
                chain,
                chain_bytes: written.chain_bytes,
                roots,
            };
            (delta, written.whole_bytes)
        })
    }

    fn manifest_exists(&self, id: &str) -> bool {
        self.manifest_path(id).exists() || self.delta_path(id).exists()
    }

    /// The delta `id`, applied to its base (loaded the same way), when there is one.
    pub(crate) fn load_delta(&self, id: &str, depth: u32) -> Result<Manifest, CheckpointError> {
        let path = self.delta_path(id);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(CheckpointError::Missing(id.to_string()))
            }
            Err(err) => return Err(CheckpointError::io("cannot read", &path)(err)),
        };
        let corrupt = |reason: String| CheckpointError::Corrupt {
            id: id.to_string(),
            reason,
        };
        let delta: DeltaFile =
            serde_json::from_slice(&bytes).map_err(|err| corrupt(err.to_string()))?;
        if delta.version > MANIFEST_VERSION || delta.id != id || depth > MAX_CHAIN {
            return Err(corrupt("not a delta this build reads".into()));
        }
        let mut manifest = self
            .load_chained(&delta.base, depth + 1)
            .map_err(|err| corrupt(format!("its base {}: {err}", delta.base)))?;
        if manifest.roots.len() != delta.roots.len() {
            return Err(corrupt("its roots differ from its base's".into()));
        }
        for (state, change) in manifest.roots.iter_mut().zip(delta.roots) {
            if state.root != change.root {
                return Err(corrupt("its roots differ from its base's".into()));
            }
            apply(state, change);
        }
        manifest.id = delta.id;
        manifest.created_ms = delta.created_ms;
        manifest.written = Written {
            base: Some(delta.base),
            chain: delta.chain,
            chain_bytes: delta.chain_bytes + bytes.len() as u64,
            whole_bytes: manifest.written.whole_bytes,
        };
        Ok(manifest)
    }
}

/// Every path whose entry differs going from `before` to `now` (stat keys included: they
/// are the next checkpoint's cache).
fn changed_entries(before: &RootState, now: &RootState) -> BTreeMap<String, Option<Node>> {
    let mut changed = BTreeMap::new();
    for (path, node) in &now.entries {
        if before.entries.get(path) != Some(node) {
            changed.insert(path.clone(), Some(node.clone()));
        }
    }
    for path in before.entries.keys() {
        if !now.entries.contains_key(path) {
            changed.insert(path.clone(), None);
        }
    }
    changed
}

fn apply(state: &mut RootState, change: RootDelta) {
    for (path, node) in change.changed {
        match node {
            Some(node) => {
                state.entries.insert(path, node);
            }
            None => {
                state.entries.remove(&path);
            }
        }
    }
    state.skipped = change.skipped;
}
