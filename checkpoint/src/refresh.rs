//! One quick checkpoint of one root: the directories the events named, listed again
//! ([`crate::Tracker`]).

use crate::error::CheckpointError;
use crate::manifest::{is_under, Node, RootState};
use crate::take::{Options, Taking};
use crate::tracker::{hook, lock};
use crate::walk::{walk, OnDir, WalkFrom, Walked, MAX_ENTRIES};
use crate::watches::{Dirty, Watches};
use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One quick checkpoint of one root.
pub(crate) struct Refresh<'a> {
    pub taking: Taking<'a>,
    pub root: &'a Path,
    pub i: usize,
    pub root_dev: u64,
    pub exclude: &'a [PathBuf],
    pub watches: &'a Arc<Mutex<Watches>>,
    pub state: &'a mut RootState,
    pub multi_links: &'a mut BTreeSet<String>,
}

impl Refresh<'_> {
    /// Lists each dirty directory again: first every removal (so a directory moved within
    /// the root loses its old watch before it gets its new one), then what is there now.
    pub(crate) fn apply(&mut self, dirty: &Dirty) -> Result<bool, CheckpointError> {
        let mut listings = Vec::new();
        for dir in &dirty.dirs {
            let covered =
                dir.is_empty() || matches!(self.state.entries.get(dir), Some(Node::Dir { .. }));
            if !covered {
                // Gone, or never covered: its parent's listing says which.
                continue;
            }
            let Some(items) = self.list(dir, Some(1), None) else {
                return Ok(false);
            };
            let now: HashMap<&str, bool> = items
                .iter()
                .map(|w| (w.rel.as_str(), w.meta.is_dir()))
                .collect();
            // A directory no longer watched was replaced (or moved away and back): walked
            // again whole.
            let watches = lock(self.watches);
            let gone: Vec<String> = children(self.state, dir)
                .filter(|(path, node)| {
                    now.get(path.as_str()) != Some(&node.is_dir())
                        || (node.is_dir() && !watches.watched(self.i, path))
                })
                .map(|(path, _)| path.clone())
                .collect();
            drop(watches);
            for path in gone {
                self.remove(&path);
            }
            listings.push(items);
        }
        for item in listings.into_iter().flatten() {
            if !self.update(&item)? {
                return Ok(false);
            }
        }
        for path in self.multi_links.clone() {
            let Ok(meta) = std::fs::symlink_metadata(self.root.join(&path)) else {
                return Ok(false);
            };
            if !self.update(&Walked { rel: path, meta })? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn list(
        &self,
        start: &str,
        max_depth: Option<usize>,
        on_dir: Option<OnDir>,
    ) -> Option<Vec<Walked>> {
        let mut skipped = Vec::new();
        let from = WalkFrom {
            root: self.root,
            start,
            max_depth,
            on_dir,
        };
        let items = walk(&from, self.exclude, &mut skipped)?;
        skipped.is_empty().then_some(items)
    }

    fn remove(&mut self, path: &str) {
        let under: Vec<String> = self
            .state
            .entries
            .range(path.to_string()..)
            .take_while(|(p, _)| p.starts_with(path))
            .filter(|(p, _)| is_under(p, path))
            .map(|(p, _)| p.clone())
            .collect();
        for p in under {
            self.state.entries.remove(&p);
            self.multi_links.remove(&p);
        }
        lock(self.watches).remove_under(self.i, path);
    }

    /// Records `item` as it is now; a new directory is watched, then walked whole. False
    /// when the quick path cannot record it as the full walk would.
    fn update(&mut self, item: &Walked) -> Result<bool, CheckpointError> {
        let known_dir = match self.state.entries.get(&item.rel) {
            // A directory whose mode changed may no longer be listable (the walk would
            // leave out what it holds): walked whole.
            Some(Node::Dir { mode }) if item.meta.is_dir() => {
                if *mode != item.meta.permissions().mode() & 0o7777 {
                    return Ok(false);
                }
                true
            }
            Some(Node::Dir { .. }) => true,
            _ => false,
        };
        let mut items = Vec::new();
        if item.meta.is_dir() && !known_dir {
            if item.meta.dev() != self.root_dev {
                return Ok(false);
            }
            lock(self.watches).add(self.i, &self.root.join(&item.rel), &item.rel);
            let on_dir = hook(self.watches.clone(), self.i, self.root);
            match self.list(&item.rel, None, Some(on_dir)) {
                Some(found) => items = found,
                None => return Ok(false),
            }
        }
        for one in std::iter::once(item).chain(&items) {
            if one.meta.is_dir() && one.meta.dev() != self.root_dev {
                return Ok(false);
            }
            let node = match self.taking.node(one, self.state.entries.get(&one.rel))? {
                Ok(node) => node,
                Err(_) => return Ok(false),
            };
            if one.meta.is_file() && one.meta.nlink() > 1 {
                self.multi_links.insert(one.rel.clone());
            } else {
                self.multi_links.remove(&one.rel);
            }
            self.state.entries.insert(one.rel.clone(), node);
        }
        Ok(true)
    }
}

/// The entries directly in `dir` ("" = the root).
fn children<'a>(
    state: &'a RootState,
    dir: &'a str,
) -> impl Iterator<Item = (&'a String, &'a Node)> + 'a {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let len = prefix.len();
    state
        .entries
        .range(prefix.clone()..)
        .take_while(move |(p, _)| p.starts_with(&prefix))
        .filter(move |(p, _)| !p[len..].contains('/'))
}

/// Whether the full walk would cover the state whole (no directory or root over its
/// limit, not too many paths): only then is the quick result the walk's.
pub(crate) fn within_limits(state: &RootState, options: &Options) -> bool {
    let sizes = state.entries.iter().filter_map(|(path, node)| match node {
        Node::File { size, .. } => Some((path, *size)),
        _ => None,
    });
    let total: u64 = sizes.clone().map(|(_, size)| size).sum();
    if state.entries.len() >= MAX_ENTRIES || total > options.max_root_bytes {
        return false;
    }
    if total <= options.max_dir_bytes {
        return true;
    }
    let mut dirs: HashMap<&str, u64> = HashMap::new();
    for (path, size) in sizes {
        let mut rel = path.as_str();
        while let Some((parent, _)) = rel.rsplit_once('/') {
            *dirs.entry(parent).or_default() += size;
            rel = parent;
        }
    }
    dirs.values().all(|total| *total <= options.max_dir_bytes)
}
