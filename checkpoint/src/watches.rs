//! The inotify side of a [`crate::Tracker`]: one instance, a watch on every covered
//! directory of every root, and what the queued events say changed since the last drain.
//!
//! Events are queued by the kernel while the call that changed the file runs, so a
//! non-blocking drain at checkpoint time sees every change completed before it. Watches
//! follow inodes, so a sandboxed command writing through its bind mounts is seen too.

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// What the events of one root said since the last drain.
#[derive(Debug, Default)]
pub(crate) struct Dirty {
    /// Directories (relative, "" = the root) some entry of which changed.
    pub dirs: BTreeSet<String>,
    /// Something events cannot be trusted for: walk the whole root.
    pub walk_all: bool,
}

#[derive(Debug)]
pub(crate) struct Watches {
    inotify: Inotify,
    by_wd: HashMap<WatchDescriptor, (usize, String)>,
    by_path: HashMap<(usize, String), WatchDescriptor>,
    /// Watches removed on purpose: their queued events are about a directory walked again
    /// since (at its new place) or gone, so they are dropped.
    retired: HashSet<WatchDescriptor>,
    /// Roots for which a watch could not be added (the per-user limit) or two paths share
    /// one watch (a bind mount inside the root).
    pub failed: BTreeSet<usize>,
}

/// Names whose change alters what is covered, not only what is there.
const RULE_NAMES: &[&str] = &[".gitignore", ".git"];

impl Watches {
    pub fn new() -> Result<Self, Errno> {
        Ok(Self {
            inotify: Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?,
            by_wd: HashMap::new(),
            by_path: HashMap::new(),
            retired: HashSet::new(),
            failed: BTreeSet::new(),
        })
    }

    /// Watches directory `abs` (`rel` in root `root`).
    pub fn add(&mut self, root: usize, abs: &Path, rel: &str) {
        let mask = AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_MODIFY
            | AddWatchFlags::IN_ATTRIB
            | AddWatchFlags::IN_MOVED_FROM
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF
            | AddWatchFlags::IN_DONT_FOLLOW
            | AddWatchFlags::IN_ONLYDIR;
        let Ok(wd) = self.inotify.add_watch(abs, mask) else {
            self.failed.insert(root);
            return;
        };
        self.retired.remove(&wd);
        let key = (root, rel.to_string());
        if let Some(other) = self.by_wd.insert(wd, key.clone()) {
            if other != key {
                // One directory at two paths: an event names only one of them.
                self.failed.insert(root);
                self.by_path.remove(&other);
            }
        }
        self.by_path.insert(key, wd);
    }

    /// Stops watching `rel` of `root` and every directory under it.
    pub fn remove_under(&mut self, root: usize, rel: &str) {
        let gone: Vec<(usize, String)> = self
            .by_path
            .keys()
            .filter(|(r, path)| *r == root && crate::manifest::is_under(path, rel))
            .cloned()
            .collect();
        for key in gone {
            if let Some(wd) = self.by_path.remove(&key) {
                self.by_wd.remove(&wd);
                let _ = self.inotify.rm_watch(wd);
                self.retired.insert(wd);
            }
        }
    }

    pub fn watched(&self, root: usize, rel: &str) -> bool {
        self.by_path.contains_key(&(root, rel.to_string()))
    }

    /// Stops watching everything of `root`, and forgets its failure.
    pub fn reset_root(&mut self, root: usize) {
        self.remove_under(root, "");
        self.failed.remove(&root);
    }

    /// Reads every queued event: per root, what changed.
    pub fn drain(&mut self, roots: usize) -> Vec<Dirty> {
        let mut dirty: Vec<Dirty> = (0..roots).map(|_| Dirty::default()).collect();
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) => events,
                Err(Errno::EAGAIN) => break,
                Err(_) => {
                    dirty.iter_mut().for_each(|d| d.walk_all = true);
                    break;
                }
            };
            for event in events {
                if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    dirty.iter_mut().for_each(|d| d.walk_all = true);
                    continue;
                }
                let Some((root, dir)) = self.by_wd.get(&event.wd).cloned() else {
                    if !event.mask.contains(AddWatchFlags::IN_IGNORED)
                        && !self.retired.contains(&event.wd)
                    {
                        dirty.iter_mut().for_each(|d| d.walk_all = true);
                    }
                    continue;
                };
                let Some(into) = dirty.get_mut(root) else {
                    continue;
                };
                if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                    // The directory is gone (its parent has the event that says so).
                    self.by_wd.remove(&event.wd);
                    let key = (root, dir);
                    if self.by_path.get(&key) == Some(&event.wd) {
                        self.by_path.remove(&key);
                    }
                    continue;
                }
                match event.name {
                    Some(name) => {
                        if RULE_NAMES.iter().any(|n| name.eq_ignore_ascii_case(n)) {
                            into.walk_all = true;
                        }
                        into.dirs.insert(dir);
                    }
                    // The directory itself: its mode, or it went away.
                    None if dir.is_empty() => {
                        let moved = AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF;
                        if event.mask.intersects(moved) {
                            into.walk_all = true;
                        }
                    }
                    None => {
                        let parent = dir.rsplit_once('/').map_or("", |(p, _)| p);
                        into.dirs.insert(parent.to_string());
                        // Gone or moved: the watch no longer names that path (a directory
                        // made there since is a new one, to walk).
                        let moved = AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF;
                        if event.mask.intersects(moved) {
                            self.by_wd.remove(&event.wd);
                            self.by_path.remove(&(root, dir));
                            let _ = self.inotify.rm_watch(event.wd);
                            self.retired.insert(event.wd);
                        }
                    }
                }
            }
        }
        dirty
    }
}
