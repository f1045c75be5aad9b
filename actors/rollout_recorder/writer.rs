//! The shared rollout writer: one bounded pool of OS threads that does the blocking file I/O
//! of every open rollout of the runtime, with group commit.
//!
//! One [`RolloutWriter`] is started per runtime and handed to every recorder, which opens a
//! [`FileWriter`] on it for its file. An idle file costs no thread: it is only a queue of
//! pending bytes and sync requests. A file with work is put once on the pool's ready queue;
//! the worker that takes it writes everything queued for that file in one write, then fsyncs
//! once for every sync request of that round, and puts the file back at the end of the ready
//! queue if more arrived meanwhile (so a busy file does not starve the others). A file is
//! drained by one worker at a time, so its lines keep their order.
//!
//! Workers are started when work finds no idle one, up to the pool's bound, and leave after
//! [`KEEP_ALIVE`] without work: fsyncs of different files overlap (the filesystem commits
//! them together), while a runtime with thousands of idle threads has no writer thread at all.
//!
//! Lines are written as soon as a worker is free (a killed process loses at most what was
//! not yet written, none of it acknowledged); a sync request is answered after every line
//! queued before it is written and synced. Closing (or dropping) a file writer drains, syncs
//! and closes the file; the workers leave once the last handle is gone and nothing is queued.

use super::file_io::FileIo;
use crate::locking::lock;
use std::collections::VecDeque;
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use thiserror::Error;
use tokio::sync::oneshot;

/// Most writer threads of a runtime: how many fsyncs may be in flight at once.
pub const DEFAULT_MAX_WORKERS: usize = 16;

/// How long a worker waits for work before it leaves.
pub const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// Answer to a sync request.
pub type SyncReply = oneshot::Sender<Result<(), String>>;

#[derive(Debug, Error)]
pub enum WriterError {
    #[error("the rollout writer of {} is closed", .0.display())]
    Closed(PathBuf),
}

/// Handle of the shared writer pool; clone it freely. The workers leave once every clone and
/// every [`FileWriter`] opened on it are dropped and all queued work is done.
#[derive(Clone)]
pub struct RolloutWriter {
    owner: Arc<Owner>,
}

/// Dropped with the last handle: tells the workers to leave when the ready queue is empty.
struct Owner {
    pool: Arc<Pool>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        lock(&self.pool.ready).shutdown = true;
        self.pool.wake.notify_all();
    }
}

/// The files with work, in the order they got it, and the workers serving them.
struct Pool {
    ready: Mutex<Ready>,
    wake: Condvar,
    max_workers: usize,
    keep_alive: Duration,
}

struct Ready {
    files: VecDeque<Arc<Slot>>,
    shutdown: bool,
    /// Workers alive.
    workers: usize,
    /// Workers draining a file (the others wait for work).
    busy: usize,
}

/// One open file: what is queued for it, and the file itself.
struct Slot {
    path: PathBuf,
    pending: Mutex<Pending>,
    /// Touched only by the worker draining the slot (one at a time, see `Pending::scheduled`).
    io: Mutex<FileIo>,
    /// Told the first failure (a write that failed, a full disk) as soon as it happens.
    on_failure: Mutex<Option<oneshot::Sender<String>>>,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    syncs: Vec<SyncReply>,
    /// A close was asked for and not yet done.
    close_requested: bool,
    closers: Vec<oneshot::Sender<()>>,
    /// No more writes are accepted.
    closed: bool,
    /// On the ready queue or being drained.
    scheduled: bool,
}

impl Pending {
    fn has_work(&self) -> bool {
        !self.bytes.is_empty() || !self.syncs.is_empty() || self.close_requested
    }
}

/// What one drain round took from a slot.
struct Round {
    bytes: Vec<u8>,
    syncs: Vec<SyncReply>,
    close: bool,
    closers: Vec<oneshot::Sender<()>>,
}

impl RolloutWriter {
    /// A pool of at most `max_workers` threads (at least one); none is started until a file
    /// has work.
    pub fn new(max_workers: usize) -> Self {
        Self::with_keep_alive(max_workers, KEEP_ALIVE)
    }

    /// Like `new`, with workers leaving after `keep_alive` without work.
    pub fn with_keep_alive(max_workers: usize, keep_alive: Duration) -> Self {
        let pool = Arc::new(Pool {
            ready: Mutex::new(Ready {
                files: VecDeque::new(),
                shutdown: false,
                workers: 0,
                busy: 0,
            }),
            wake: Condvar::new(),
            max_workers: max_workers.max(1),
            keep_alive,
        });
        Self {
            owner: Arc::new(Owner { pool }),
        }
    }

    /// Serves `file` (opened for appending) from now on.
    pub fn open(&self, path: PathBuf, file: File) -> FileWriter {
        FileWriter {
            slot: Arc::new(Slot {
                path,
                pending: Mutex::new(Pending::default()),
                io: Mutex::new(FileIo::new(file)),
                on_failure: Mutex::new(None),
            }),
            owner: self.owner.clone(),
        }
    }
}

impl Pool {
    /// Queues a file with work; wakes an idle worker, or starts one when none is idle.
    fn schedule(self: &Arc<Self>, slot: Arc<Slot>) {
        let mut ready = lock(&self.ready);
        ready.files.push_back(slot);
        let idle = ready.workers - ready.busy;
        if idle >= ready.files.len() || ready.workers >= self.max_workers {
            self.wake.notify_one();
            return;
        }
        ready.workers += 1;
        let pool = self.clone();
        let started = std::thread::Builder::new()
            .name("rollout-writer".into())
            .spawn(move || pool.work());
        if let Err(err) = started {
            ready.workers -= 1;
            // The file stays queued for a worker already running, or for the next schedule.
            tracing::error!(%err, "cannot start a rollout writer thread");
            self.wake.notify_one();
        }
    }

    /// Drains files until there is no work for `keep_alive` (or the pool is shut down).
    fn work(&self) {
        let mut ready = lock(&self.ready);
        loop {
            if let Some(slot) = ready.files.pop_front() {
                ready.busy += 1;
                drop(ready);
                slot.drain_round();
                let more = {
                    let mut pending = lock(&slot.pending);
                    pending.scheduled = pending.has_work();
                    pending.scheduled
                };
                ready = lock(&self.ready);
                ready.busy -= 1;
                if more {
                    // At the back: a busy file does not starve the others.
                    ready.files.push_back(slot);
                }
                continue;
            }
            if ready.shutdown {
                break;
            }
            let (guard, wait) = self
                .wake
                .wait_timeout(ready, self.keep_alive)
                .unwrap_or_else(PoisonError::into_inner);
            ready = guard;
            if wait.timed_out() && ready.files.is_empty() {
                break;
            }
        }
        ready.workers -= 1;
    }
}

impl Slot {
    /// Writes what is queued in one write, then one fsync for the round's sync requests (and
    /// a close), then answers them.
    fn drain_round(&self) {
        let round = {
            let mut pending = lock(&self.pending);
            Round {
                bytes: std::mem::take(&mut pending.bytes),
                syncs: std::mem::take(&mut pending.syncs),
                close: std::mem::take(&mut pending.close_requested),
                closers: std::mem::take(&mut pending.closers),
            }
        };
        let mut io = lock(&self.io);
        let result = if io.file.is_none() {
            Err(format!("{} is already closed", self.path.display()))
        } else {
            if let Some(failure) = io.write(&self.path, &round.bytes) {
                if let Some(tell) = lock(&self.on_failure).take() {
                    let _ = tell.send(failure);
                }
            }
            if round.syncs.is_empty() && !round.close {
                Ok(())
            } else {
                io.sync(&self.path)
            }
        };
        if round.close {
            io.close();
        }
        drop(io);
        for reply in round.syncs {
            let _ = reply.send(result.clone());
        }
        for closer in round.closers {
            let _ = closer.send(());
        }
    }
}

/// One rollout file served by the pool; dropping it (or `finish`) drains, syncs and closes
/// the file.
pub struct FileWriter {
    slot: Arc<Slot>,
    owner: Arc<Owner>,
}

impl FileWriter {
    /// Queues bytes (whole lines) for writing.
    pub fn write(&self, bytes: Vec<u8>) -> Result<(), WriterError> {
        self.queue(|pending| pending.bytes.extend_from_slice(&bytes))
    }

    /// The first failure of this file (a write that failed, a full disk), as soon as a worker
    /// meets it; asking again replaces the previous receiver.
    pub fn on_failure(&self) -> oneshot::Receiver<String> {
        let (tx, rx) = oneshot::channel();
        // Under the I/O lock (taken before `on_failure`, as the workers do): a failure is
        // either seen here or told to this receiver, never lost in between.
        let io = lock(&self.slot.io);
        match io.error() {
            Some(failure) => {
                let _ = tx.send(failure.clone());
            }
            None => *lock(&self.slot.on_failure) = Some(tx),
        }
        drop(io);
        rx
    }

    /// Queues an fsync of everything queued so far; `reply` gets its result.
    pub fn sync(&self, reply: SyncReply) -> Result<(), WriterError> {
        self.queue(|pending| pending.syncs.push(reply))
    }

    fn queue(&self, add: impl FnOnce(&mut Pending)) -> Result<(), WriterError> {
        let mut pending = lock(&self.slot.pending);
        if pending.closed {
            return Err(WriterError::Closed(self.slot.path.clone()));
        }
        add(&mut pending);
        self.schedule(pending);
        Ok(())
    }

    /// Puts the slot on the ready queue unless it is there already (or being drained, in
    /// which case the worker puts it back when it sees the new work).
    fn schedule(&self, mut pending: MutexGuard<'_, Pending>) {
        if pending.scheduled {
            return;
        }
        pending.scheduled = true;
        drop(pending);
        self.owner.pool.schedule(self.slot.clone());
    }

    /// Closes the file for writing; `closer` is told once all is written, synced and closed.
    fn close(&self, closer: Option<oneshot::Sender<()>>) {
        let mut pending = lock(&self.slot.pending);
        let first = !pending.closed;
        pending.closed = true;
        pending.closers.extend(closer);
        // A close already done still needs a round to answer a new closer.
        if first || !pending.closers.is_empty() {
            pending.close_requested = true;
            self.schedule(pending);
        }
    }

    /// Stops accepting writes and waits until everything is written, synced and closed.
    pub async fn finish(&mut self) {
        let (tx, rx) = oneshot::channel();
        self.close(Some(tx));
        let _ = rx.await;
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        self.close(None);
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
