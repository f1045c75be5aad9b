//! Checkpoints without walking the whole tree every turn. A [`Tracker`] keeps the last
//! state of its roots and an inotify watch on every covered directory; at the next
//! checkpoint it drains the queued events and lists again only the directories they name
//! (a new directory is walked whole, after its watch is in place). It falls back to the
//! full walk of [`Store::take`] whenever the events cannot vouch for the rest: a queue
//! overflow, a watch that could not be added, a change to `.gitignore` or a `.git` (what is
//! covered changed), a mount inside the root, a file system whose changes the kernel may
//! not report (anything but the local ones listed below), or a state the quick path does
//! not keep up to date (a root with anything left out: a directory over the limit, a
//! socket, an unreadable file). So the quick path gives the same manifest the walk would.
//!
//! Files with several links are stat'ed at every checkpoint: a write through another link
//! raises no event in their directory. Writes through a shared `mmap` are not reported by
//! inotify; they show at the next full walk (a new process, or any fallback above).

use crate::error::CheckpointError;
use crate::fsat;
use crate::manifest::{Manifest, RootState};
use crate::objects::Store;
use crate::refresh::{within_limits, Refresh};
use crate::take::{now_ns, Options, RootSpec, Taking};
use crate::walk::OnDir;
use crate::watches::{Dirty, Watches};
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// File systems whose every change goes through this kernel's VFS (so raises inotify
/// events): ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs, bcachefs, overlayfs.
const LOCAL_FS: &[i64] = &[
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0xF2F5_2010,
    0x2FC1_2FC1,
    0xCA45_1A4E,
    0x794C_7630,
];

/// Trackers with an inotify instance at once in this process, at most: instances are
/// limited per user (128 by default) and shared with the user's editors and tools.
const MAX_WATCHING: usize = 16;

static WATCHING: AtomicUsize = AtomicUsize::new(0);

/// Keeps the state of a set of roots between checkpoints (see the module comment).
pub struct Tracker {
    options: Options,
    watches: Option<Arc<Mutex<Watches>>>,
    roots: Vec<Tracked>,
}

struct Tracked {
    root: PathBuf,
    state: Option<RootState>,
    multi_links: BTreeSet<String>,
    /// The ignore files above and in the root that events do not cover, as they were.
    rules: Vec<(PathBuf, Option<FileKey>)>,
    watched: bool,
}

type FileKey = (u64, i64, i64, u64);

impl Tracker {
    /// A tracker covering what `options` say; without inotify (every checkpoint a full
    /// walk) when `watch` is false or no instance can be had.
    pub fn new(options: Options, watch: bool) -> Self {
        let slot = watch
            && WATCHING
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < MAX_WATCHING).then_some(n + 1)
                })
                .is_ok();
        let watches = if slot {
            let watches = Watches::new().ok().map(|w| Arc::new(Mutex::new(w)));
            if watches.is_none() {
                WATCHING.fetch_sub(1, Ordering::AcqRel);
            }
            watches
        } else {
            None
        };
        Self {
            options,
            watches,
            roots: Vec::new(),
        }
    }

    /// What it covers.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Whether changes are followed by events (false: every checkpoint walks).
    pub fn watching(&self) -> bool {
        self.watches.is_some()
    }

    /// Records the state of `roots`, as [`Store::take`] would; `previous` serves as the
    /// stat cache of a full walk when the tracker has none of its own yet.
    pub fn take(
        &mut self,
        store: &Store,
        roots: &[RootSpec],
        previous: Option<&Manifest>,
    ) -> Result<Manifest, CheckpointError> {
        let start_ns = now_ns();
        if self.roots.iter().map(|t| &t.root).ne(roots.iter()) {
            if let Some(watches) = &self.watches {
                let mut watches = lock(watches);
                (0..self.roots.len()).for_each(|i| watches.reset_root(i));
            }
            self.roots = roots.iter().map(|r| Tracked::new(r.clone())).collect();
        }
        let dirty = match &self.watches {
            Some(watches) => lock(watches).drain(roots.len()),
            None => Vec::new(),
        };
        let exclude = store.exclusions(&self.options);
        let mut files_read = 0;
        let mut states = Vec::with_capacity(roots.len());
        for i in 0..roots.len() {
            let quick = match dirty.get(i) {
                Some(dirty) if !dirty.walk_all && self.can_refresh(i) => {
                    let refreshed = self.refresh(store, i, dirty, &exclude, start_ns);
                    match refreshed {
                        Ok(Some(read)) => {
                            files_read += read;
                            true
                        }
                        Ok(None) => false,
                        Err(err) => {
                            self.roots[i].state = None;
                            return Err(err);
                        }
                    }
                }
                _ => false,
            };
            if !quick {
                let prev = previous.and_then(|m| m.root(&self.roots[i].root));
                if let Err(err) = self.full(store, i, prev, &exclude, start_ns, &mut files_read) {
                    self.roots[i].state = None;
                    return Err(err);
                }
            }
            if let Some(state) = &self.roots[i].state {
                states.push(state.clone());
            }
        }
        Ok(Manifest::new(states, files_read))
    }

    fn can_refresh(&self, i: usize) -> bool {
        let tracked = &self.roots[i];
        let failed = self
            .watches
            .as_ref()
            .is_some_and(|w| lock(w).failed.contains(&i));
        tracked.watched
            && !failed
            && tracked.state.as_ref().is_some_and(|s| s.skipped.is_empty())
            && rules_of(&tracked.root) == tracked.rules
    }

    /// Walks root `i` whole, watching every directory before it is listed.
    fn full(
        &mut self,
        store: &Store,
        i: usize,
        previous: Option<&RootState>,
        exclude: &[PathBuf],
        start_ns: i64,
        files_read: &mut usize,
    ) -> Result<(), CheckpointError> {
        let root = self.roots[i].root.clone();
        let own = self.roots[i].state.take();
        let cache = own.as_ref().or(previous);
        let watches = self.watches.clone().filter(|_| local_fs(&root));
        let on_dir = watches.as_ref().map(|w| {
            {
                let mut w = lock(w);
                w.reset_root(i);
                w.add(i, &root, "");
            }
            hook(w.clone(), i, &root)
        });
        self.roots[i].rules = rules_of(&root);
        let (state, facts) = store.take_root(
            &root,
            cache,
            &self.options,
            exclude,
            start_ns,
            on_dir,
            files_read,
        )?;
        let tracked = &mut self.roots[i];
        tracked.watched = watches.is_some() && !facts.other_device && state.skipped.is_empty();
        if let (Some(w), false) = (&watches, tracked.watched) {
            lock(w).reset_root(i);
        }
        tracked.multi_links = facts.multi_links;
        tracked.state = Some(state);
        Ok(())
    }

    /// Brings root `i` up to date from its events; `None` when they cannot vouch for it
    /// (the caller walks it whole), else how many files were read.
    fn refresh(
        &mut self,
        store: &Store,
        i: usize,
        dirty: &Dirty,
        exclude: &[PathBuf],
        start_ns: i64,
    ) -> Result<Option<usize>, CheckpointError> {
        let Some(watches) = self.watches.clone() else {
            return Ok(None);
        };
        let tracked = &mut self.roots[i];
        if dirty.dirs.is_empty() && tracked.multi_links.is_empty() {
            return Ok(Some(0));
        }
        let root = tracked.root.clone();
        let root_fd = fsat::open_root(&root).map_err(|_| CheckpointError::BadRoot(root.clone()))?;
        let root_dev = std::fs::symlink_metadata(&root)
            .map_err(CheckpointError::io("cannot read", &root))?
            .dev();
        let mut run = Refresh {
            taking: Taking {
                store,
                root_fd,
                keep: self.options.keep,
                start_ns,
                files_read: 0,
            },
            root: &root,
            i,
            root_dev,
            exclude,
            watches: &watches,
            state: match tracked.state.as_mut() {
                Some(state) => state,
                None => return Ok(None),
            },
            multi_links: &mut tracked.multi_links,
        };
        if !run.apply(dirty)? || !within_limits(run.state, &self.options) {
            return Ok(None);
        }
        Ok(Some(run.taking.files_read))
    }
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracker")
            .field(
                "roots",
                &self.roots.iter().map(|t| &t.root).collect::<Vec<_>>(),
            )
            .field("watching", &self.watching())
            .finish_non_exhaustive()
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        if self.watches.take().is_some() {
            WATCHING.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Tracked {
    fn new(root: PathBuf) -> Self {
        Self {
            root,
            state: None,
            multi_links: BTreeSet::new(),
            rules: Vec::new(),
            watched: false,
        }
    }
}

/// The walker's hook: watch each directory before it is listed.
pub(crate) fn hook(watches: Arc<Mutex<Watches>>, i: usize, root: &Path) -> OnDir {
    let root = root.to_path_buf();
    Arc::new(move |abs: &Path| {
        if let Some(rel) = abs.strip_prefix(&root).ok().and_then(Path::to_str) {
            lock(&watches).add(i, abs, rel);
        }
    })
}

fn local_fs(root: &Path) -> bool {
    nix::sys::statfs::statfs(root).is_ok_and(|fs| {
        #[allow(
            clippy::useless_conversion,
            reason = "the field's type differs between targets"
        )]
        let kind = i64::from(fs.filesystem_type().0);
        LOCAL_FS.contains(&kind)
    })
}

/// The ignore files no event covers: `.gitignore`, `.git` and `.git/info/exclude` of the
/// root and each directory above it.
fn rules_of(root: &Path) -> Vec<(PathBuf, Option<FileKey>)> {
    let mut out = Vec::new();
    for dir in root.ancestors() {
        for rel in [".gitignore", ".git", ".git/info/exclude"] {
            let path = dir.join(rel);
            let key = std::fs::symlink_metadata(&path).ok().map(|m| {
                if m.is_dir() {
                    // A repository's own directory changes with every git command; only
                    // whether it is there matters.
                    (m.ino(), 0, 0, 0)
                } else {
                    (
                        m.ino(),
                        m.mtime() * 1_000_000_000 + m.mtime_nsec(),
                        m.ctime() * 1_000_000_000 + m.ctime_nsec(),
                        m.len(),
                    )
                }
            });
            out.push((path, key));
        }
    }
    out
}

pub(crate) fn lock(watches: &Mutex<Watches>) -> MutexGuard<'_, Watches> {
    watches
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
