//! Listing a root: every path `.gitignore` does not ignore, by stat only. The whole root for a
//! full checkpoint, or one directory (or one new subtree) when a [`crate::Tracker`] knows
//! only that part changed; both go through the same walker, so both leave out the same paths.

use crate::manifest::Skipped;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Paths walked in one root at most: a root with more (a turn started in a home directory)
/// is left out whole rather than holding the turn's tools up while it is walked.
pub(crate) const MAX_ENTRIES: usize = 250_000;

/// Called with each directory the walker is about to list (not the start itself), before
/// it lists it: a tracker adds its watch there, so no change made after the listing is
/// missed.
pub(crate) type OnDir = Arc<dyn Fn(&Path) + Send + Sync>;

pub(crate) struct Walked {
    pub rel: String,
    pub meta: std::fs::Metadata,
}

/// Where and how far to walk.
pub(crate) struct WalkFrom<'a> {
    pub root: &'a Path,
    /// The directory to list, relative to the root ("" = the root).
    pub start: &'a str,
    /// `Some(1)`: the start's own entries only.
    pub max_depth: Option<usize>,
    pub on_dir: Option<OnDir>,
}

/// Every path under `from.start` that `.gitignore` does not ignore, `.git`/`.troupe` and the
/// excluded paths aside; links are listed, never followed. `None` past [`MAX_ENTRIES`].
/// Ignore files of the start's parents apply (as they do to a walk from the root).
pub(crate) fn walk(
    from: &WalkFrom<'_>,
    exclude: &[PathBuf],
    skipped: &mut Vec<Skipped>,
) -> Option<Vec<Walked>> {
    let root = from.root;
    let exclude = exclude.to_vec();
    let on_dir = from.on_dir.clone();
    let start = if from.start.is_empty() {
        root.to_path_buf()
    } else {
        root.join(from.start)
    };
    let walker = ignore::WalkBuilder::new(&start)
        .standard_filters(false)
        .git_ignore(true)
        .git_exclude(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .max_depth(from.max_depth)
        .filter_entry(move |entry| {
            let name = entry.file_name().to_string_lossy();
            let never = entry.depth() > 0
                && crate::NEVER_WALKED
                    .iter()
                    .any(|n| name.eq_ignore_ascii_case(n));
            let keep = !never && !exclude.iter().any(|x| entry.path().starts_with(x));
            // The walker calls this after its ignore rules, so what is kept is what it
            // lists; a directory is listed after this returns.
            if keep && entry.file_type().is_some_and(|t| t.is_dir()) {
                if let Some(on_dir) = &on_dir {
                    on_dir(entry.path());
                }
            }
            keep
        })
        .build();
    let mut out = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                // A directory that cannot be read is left out, with what it holds; an
                // error naming no path ("." matches no entry) is only reported.
                let path = error_path(&err)
                    .and_then(|p| p.strip_prefix(root).ok())
                    .and_then(|p| p.to_str())
                    .filter(|p| !p.is_empty())
                    .unwrap_or(".")
                    .to_string();
                skipped.push(Skipped {
                    path,
                    reason: format!("not walked: {err}"),
                });
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if out.len() >= MAX_ENTRIES {
            return None;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str().map(str::to_string) else {
            skipped.push(Skipped {
                path: rel.to_string_lossy().into_owned(),
                reason: "its name is not UTF-8".into(),
            });
            continue;
        };
        match std::fs::symlink_metadata(entry.path()) {
            Ok(meta) => out.push(Walked { rel, meta }),
            Err(err) => skipped.push(Skipped {
                path: rel,
                reason: format!("unreadable: {err}"),
            }),
        }
    }
    Some(out)
}

fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}
