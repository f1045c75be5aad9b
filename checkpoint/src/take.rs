//! Taking a checkpoint: walk each root (stat only), leave out what is not covered, then
//! hash (and store) only the files the previous manifest cannot vouch for.

use crate::error::CheckpointError;
use crate::fsat;
use crate::manifest::{Manifest, Node, RootState, Skipped, StatKey, MANIFEST_VERSION};
use crate::objects::{now_ms, Store};
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A file whose times are this close to the start of the checkpoint may change again
/// within the same clock tick without its times showing it (file times come from a coarse
/// clock): its stat key is recorded as untrusted, so the next checkpoint reads it again.
const RACY_NS: i64 = 100_000_000;

/// Paths walked in one root at most: a root with more (a turn started in a home directory)
/// is left out whole rather than holding the turn's tools up while it is walked.
const MAX_ENTRIES: usize = 250_000;

/// What to cover.
#[derive(Debug, Clone)]
pub struct Options {
    /// A directory (not the root) holding more than this, in bytes, is left out whole.
    pub max_dir_bytes: u64,
    /// A root still holding more than this after that is left out whole (a turn started in
    /// a home directory must not copy it into the store).
    pub max_root_bytes: u64,
    /// Absolute paths never walked (the store itself, deny-read paths).
    pub exclude: Vec<PathBuf>,
    /// Store the contents (false: only hash them, for a dry run).
    pub keep: bool,
}

/// A root to cover: its canonical path.
pub type RootSpec = PathBuf;

struct Walked {
    rel: String,
    meta: std::fs::Metadata,
}

impl Store {
    /// Records the state of `roots`. A file unchanged since `previous` (same size, times,
    /// inode, device) is not read again. The manifest is not written: see
    /// [`Store::write_manifest`].
    pub fn take(
        &self,
        roots: &[RootSpec],
        previous: Option<&Manifest>,
        options: &Options,
    ) -> Result<Manifest, CheckpointError> {
        let start_ns = now_ns();
        let mut exclude = options.exclude.clone();
        exclude.push(self.dir().to_path_buf());
        let mut states = Vec::with_capacity(roots.len());
        let mut files_read = 0;
        for root in roots {
            let prev = previous.and_then(|m| m.root(root));
            states.push(self.take_root(
                root,
                prev,
                options,
                &exclude,
                start_ns,
                &mut files_read,
            )?);
        }
        Ok(Manifest {
            version: MANIFEST_VERSION,
            id: Store::new_id(),
            created_ms: now_ms(),
            roots: states,
            files_read,
        })
    }

    fn take_root(
        &self,
        root: &Path,
        previous: Option<&RootState>,
        options: &Options,
        exclude: &[PathBuf],
        start_ns: i64,
        files_read: &mut usize,
    ) -> Result<RootState, CheckpointError> {
        let root_fd = fsat::open_root(root).map_err(|_| CheckpointError::BadRoot(root.into()))?;
        let mut skipped = Vec::new();
        let Some(walked) = walk(root, exclude, &mut skipped) else {
            return Ok(whole_root_skipped(
                root,
                format!("the whole root: more than {MAX_ENTRIES} paths to walk"),
            ));
        };
        skip_large_dirs(&walked, options.max_dir_bytes, &mut skipped);
        let covered: u64 = walked
            .iter()
            .filter(|w| w.meta.is_file() && !crate::manifest::under_skipped(&w.rel, &skipped))
            .map(|w| w.meta.len())
            .sum();
        if covered > options.max_root_bytes {
            return Ok(whole_root_skipped(
                root,
                format!(
                    "the whole root: {} MB to copy, over the store's limit (checkpoints.max_total_mb)",
                    covered / (1024 * 1024)
                ),
            ));
        }
        let mut entries = BTreeMap::new();
        for item in walked {
            if crate::manifest::under_skipped(&item.rel, &skipped) {
                continue;
            }
            let meta = &item.meta;
            let mode = meta.permissions().mode() & 0o7777;
            let kind = meta.file_type();
            let node = if kind.is_dir() {
                Node::Dir { mode }
            } else if kind.is_symlink() {
                match read_link(&root_fd, &item.rel) {
                    Some(target) => Node::Symlink { target },
                    None => {
                        skipped.push(Skipped {
                            path: item.rel,
                            reason: "a link whose target is not UTF-8 or unreadable".into(),
                        });
                        continue;
                    }
                }
            } else if kind.is_file() {
                let stat = stat_key(meta, start_ns);
                let cached = previous
                    .and_then(|p| p.entries.get(&item.rel))
                    .and_then(|node| match node {
                        Node::File {
                            size,
                            hash,
                            stat: old,
                            ..
                        } if old.trusted() && *old == stat && *size == meta.len() => {
                            Some(hash.clone())
                        }
                        _ => None,
                    });
                let (hash, size) = match cached {
                    Some(hash) => (hash, meta.len()),
                    None => match fsat::open_file(&root_fd, &item.rel) {
                        Ok(mut file) => {
                            *files_read += 1;
                            self.put(&mut file, options.keep)?
                        }
                        Err(errno) => {
                            skipped.push(Skipped {
                                path: item.rel,
                                reason: format!("unreadable: {errno}"),
                            });
                            continue;
                        }
                    },
                };
                Node::File {
                    mode,
                    size,
                    hash,
                    stat,
                }
            } else {
                skipped.push(Skipped {
                    path: item.rel,
                    reason: "not a file, directory or link (a socket, fifo or device)".into(),
                });
                continue;
            };
            entries.insert(item.rel, node);
        }
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(RootState {
            root: root.to_path_buf(),
            entries,
            skipped,
        })
    }
}

/// A root left out whole (the empty path covers everything under it).
fn whole_root_skipped(root: &Path, reason: String) -> RootState {
    RootState {
        root: root.to_path_buf(),
        entries: BTreeMap::new(),
        skipped: vec![Skipped {
            path: String::new(),
            reason,
        }],
    }
}

/// Every path under `root` that `.gitignore` does not ignore, `.git`/`.troupe` and the
/// excluded paths aside; links are listed, never followed. `None` past [`MAX_ENTRIES`].
fn walk(root: &Path, exclude: &[PathBuf], skipped: &mut Vec<Skipped>) -> Option<Vec<Walked>> {
    let exclude = exclude.to_vec();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .git_ignore(true)
        .git_exclude(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let name = entry.file_name().to_string_lossy();
            let never = entry.depth() > 0
                && crate::NEVER_WALKED
                    .iter()
                    .any(|n| name.eq_ignore_ascii_case(n));
            !never && !exclude.iter().any(|x| entry.path().starts_with(x))
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

/// Leaves out, deepest first, every directory holding more than `max` bytes of what is
/// still covered; what a deeper one held no longer counts for its parents.
fn skip_large_dirs(walked: &[Walked], max: u64, skipped: &mut Vec<Skipped>) {
    let mut totals: HashMap<&str, u64> = HashMap::new();
    for item in walked {
        if item.meta.is_file() {
            let mut rel = item.rel.as_str();
            while let Some((parent, _)) = rel.rsplit_once('/') {
                *totals.entry(parent).or_default() += item.meta.len();
                rel = parent;
            }
        }
    }
    let mut dirs: Vec<&str> = totals.keys().copied().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
    for dir in dirs {
        let total = totals.get(dir).copied().unwrap_or(0);
        if total <= max {
            continue;
        }
        skipped.push(Skipped {
            path: dir.to_string(),
            reason: format!(
                "a directory of {} MB, over the checkpoint limit (checkpoints.max_dir_mb)",
                total / (1024 * 1024)
            ),
        });
        let mut rel = dir;
        while let Some((parent, _)) = rel.rsplit_once('/') {
            if let Some(t) = totals.get_mut(parent) {
                *t = t.saturating_sub(total);
            }
            rel = parent;
        }
    }
}

fn read_link(root: &std::os::fd::OwnedFd, rel: &str) -> Option<String> {
    let (dir, name) = fsat::open_parent(root, rel).ok()?;
    let target = nix::fcntl::readlinkat(Some(std::os::fd::AsRawFd::as_raw_fd(&dir)), name).ok()?;
    target.into_string().ok()
}

fn stat_key(meta: &std::fs::Metadata, start_ns: i64) -> StatKey {
    let mtime_ns = meta.mtime() * 1_000_000_000 + meta.mtime_nsec();
    let ctime_ns = meta.ctime() * 1_000_000_000 + meta.ctime_nsec();
    if mtime_ns.max(ctime_ns) > start_ns - RACY_NS {
        return StatKey::default();
    }
    StatKey {
        mtime_ns,
        ctime_ns,
        ino: meta.ino(),
        dev: meta.dev(),
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
