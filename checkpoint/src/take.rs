//! Taking a checkpoint: walk each root (stat only), leave out what is not covered, then
//! hash (and store) only the files the previous manifest cannot vouch for.

use crate::error::CheckpointError;
use crate::fsat;
use crate::manifest::{Manifest, Node, RootState, Skipped, StatKey, MANIFEST_VERSION};
use crate::objects::{now_ms, Store};
use crate::walk::{walk, OnDir, WalkFrom, Walked, MAX_ENTRIES};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A file whose times are this close to the start of the checkpoint may change again
/// within the same clock tick without its times showing it (file times come from a coarse
/// clock): its stat key is recorded as untrusted, so the next checkpoint reads it again.
const RACY_NS: i64 = 100_000_000;

/// What to cover.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// What a walk saw beyond the manifest, for a [`crate::Tracker`].
#[derive(Debug, Default)]
pub(crate) struct WalkFacts {
    /// Files with more than one link: a change through another link raises no event in
    /// their directory, so a tracker stats them at every checkpoint.
    pub multi_links: BTreeSet<String>,
    /// A directory on another device than the root (a mount inside it).
    pub other_device: bool,
}

/// One checkpoint's context while taking it.
pub(crate) struct Taking<'a> {
    pub store: &'a Store,
    pub root_fd: std::os::fd::OwnedFd,
    pub keep: bool,
    pub start_ns: i64,
    pub files_read: usize,
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
        let exclude = self.exclusions(options);
        let mut states = Vec::with_capacity(roots.len());
        let mut files_read = 0;
        for root in roots {
            let prev = previous.and_then(|m| m.root(root));
            let (state, _) = self.take_root(
                root,
                prev,
                options,
                &exclude,
                start_ns,
                None,
                &mut files_read,
            )?;
            states.push(state);
        }
        Ok(Manifest::new(states, files_read))
    }

    /// The paths never walked: the caller's, and the store itself.
    pub(crate) fn exclusions(&self, options: &Options) -> Vec<PathBuf> {
        let mut exclude = options.exclude.clone();
        exclude.push(self.dir().to_path_buf());
        exclude
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the full walk's inputs; a tracker passes its watch hook too"
    )]
    pub(crate) fn take_root(
        &self,
        root: &Path,
        previous: Option<&RootState>,
        options: &Options,
        exclude: &[PathBuf],
        start_ns: i64,
        on_dir: Option<OnDir>,
        files_read: &mut usize,
    ) -> Result<(RootState, WalkFacts), CheckpointError> {
        let root_fd = fsat::open_root(root).map_err(|_| CheckpointError::BadRoot(root.into()))?;
        let mut facts = WalkFacts::default();
        let mut skipped = Vec::new();
        let from = WalkFrom {
            root,
            start: "",
            max_depth: None,
            on_dir,
        };
        let Some(walked) = walk(&from, exclude, &mut skipped) else {
            return Ok((
                whole_root_skipped(
                    root,
                    format!("the whole root: more than {MAX_ENTRIES} paths to walk"),
                ),
                facts,
            ));
        };
        skip_large_dirs(&walked, options.max_dir_bytes, &mut skipped);
        let covered: u64 = walked
            .iter()
            .filter(|w| w.meta.is_file() && !crate::manifest::under_skipped(&w.rel, &skipped))
            .map(|w| w.meta.len())
            .sum();
        if covered > options.max_root_bytes {
            return Ok((
                whole_root_skipped(
                    root,
                    format!(
                        "the whole root: {} MB to copy, over the store's limit (checkpoints.max_total_mb)",
                        covered / (1024 * 1024)
                    ),
                ),
                facts,
            ));
        }
        let root_dev = std::fs::symlink_metadata(root)
            .map_err(CheckpointError::io("cannot read", root))?
            .dev();
        let mut taking = Taking {
            store: self,
            root_fd,
            keep: options.keep,
            start_ns,
            files_read: 0,
        };
        let mut entries = BTreeMap::new();
        for item in walked {
            if crate::manifest::under_skipped(&item.rel, &skipped) {
                continue;
            }
            if item.meta.is_dir() && item.meta.dev() != root_dev {
                facts.other_device = true;
            }
            if item.meta.is_file() && item.meta.nlink() > 1 {
                facts.multi_links.insert(item.rel.clone());
            }
            let cached = previous.and_then(|p| p.entries.get(&item.rel));
            match taking.node(&item, cached)? {
                Ok(node) => {
                    entries.insert(item.rel, node);
                }
                Err(reason) => skipped.push(Skipped {
                    path: item.rel,
                    reason,
                }),
            }
        }
        *files_read += taking.files_read;
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((
            RootState {
                root: root.to_path_buf(),
                entries,
                skipped,
            },
            facts,
        ))
    }
}

impl Taking<'_> {
    /// What `item` is, reading (and storing) a file only when `previous` cannot vouch for
    /// it; `Ok(Err(reason))` when it is left out.
    pub(crate) fn node(
        &mut self,
        item: &Walked,
        previous: Option<&Node>,
    ) -> Result<Result<Node, String>, CheckpointError> {
        let meta = &item.meta;
        let mode = meta.permissions().mode() & 0o7777;
        let kind = meta.file_type();
        if kind.is_dir() {
            return Ok(Ok(Node::Dir { mode }));
        }
        if kind.is_symlink() {
            return Ok(match read_link(&self.root_fd, &item.rel) {
                Some(target) => Ok(Node::Symlink { target }),
                None => Err("a link whose target is not UTF-8 or unreadable".into()),
            });
        }
        if !kind.is_file() {
            return Ok(Err(
                "not a file, directory or link (a socket, fifo or device)".into(),
            ));
        }
        let stat = stat_key(meta, self.start_ns);
        let cached = previous.and_then(|node| match node {
            Node::File {
                size,
                hash,
                stat: old,
                ..
            } if old.trusted() && *old == stat && *size == meta.len() => Some(hash.clone()),
            _ => None,
        });
        let (hash, size) = match cached {
            Some(hash) => (hash, meta.len()),
            None => match fsat::open_file(&self.root_fd, &item.rel) {
                Ok(mut file) => {
                    self.files_read += 1;
                    self.store.put(&mut file, self.keep)?
                }
                Err(errno) => return Ok(Err(format!("unreadable: {errno}"))),
            },
        };
        Ok(Ok(Node::File {
            mode,
            size,
            hash,
            stat,
        }))
    }
}

impl Manifest {
    /// A new checkpoint of `roots`, with a fresh id.
    pub(crate) fn new(roots: Vec<RootState>, files_read: usize) -> Manifest {
        Manifest {
            version: MANIFEST_VERSION,
            id: Store::new_id(),
            created_ms: now_ms(),
            roots,
            files_read,
            written: crate::manifest::Written::default(),
        }
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

pub(crate) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
