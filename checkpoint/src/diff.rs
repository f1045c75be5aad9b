//! What differs between two checkpoints of the same roots.

use crate::manifest::{under_skipped, Manifest, Node};
use serde::Serialize;
use std::path::PathBuf;

/// How one path differs going from one checkpoint to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Removed,
    Modified,
    ModeChanged,
    TypeChanged,
}

impl ChangeKind {
    pub fn symbol(self) -> &'static str {
        match self {
            ChangeKind::Added => "A",
            ChangeKind::Removed => "D",
            ChangeKind::Modified => "M",
            ChangeKind::ModeChanged => "m",
            ChangeKind::TypeChanged => "T",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub root: PathBuf,
    pub path: String,
    pub kind: ChangeKind,
}

impl Change {
    pub fn full_path(&self) -> PathBuf {
        self.root.join(&self.path)
    }
}

/// Going from `from` to `to`, for every root both cover; paths either leaves out (a
/// directory over the limit) do not count.
pub fn diff(from: &Manifest, to: &Manifest) -> Vec<Change> {
    let mut changes = Vec::new();
    for before in &from.roots {
        let Some(after) = to.root(&before.root) else {
            continue;
        };
        let left_out = |path: &str| {
            under_skipped(path, &before.skipped) || under_skipped(path, &after.skipped)
        };
        let mut push = |path: &str, kind| {
            if !left_out(path) {
                changes.push(Change {
                    root: before.root.clone(),
                    path: path.to_string(),
                    kind,
                });
            }
        };
        for (path, old) in &before.entries {
            match after.entries.get(path) {
                None => push(path, ChangeKind::Removed),
                Some(new) if old.same_as(new) => {}
                Some(new) => push(path, kind_of_change(old, new)),
            }
        }
        for path in after.entries.keys() {
            if !before.entries.contains_key(path) {
                push(path, ChangeKind::Added);
            }
        }
    }
    changes.sort_by(|a, b| (&a.root, &a.path).cmp(&(&b.root, &b.path)));
    changes
}

fn kind_of_change(old: &Node, new: &Node) -> ChangeKind {
    match (old, new) {
        (Node::File { hash: a, .. }, Node::File { hash: b, .. }) if a == b => {
            ChangeKind::ModeChanged
        }
        (Node::File { .. }, Node::File { .. }) | (Node::Symlink { .. }, Node::Symlink { .. }) => {
            ChangeKind::Modified
        }
        (Node::Dir { .. }, Node::Dir { .. }) => ChangeKind::ModeChanged,
        _ => ChangeKind::TypeChanged,
    }
}
