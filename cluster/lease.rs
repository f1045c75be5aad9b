//! Leases: who runs a thread. The lease is a key-value entry; holding it means knowing its
//! current revision, and every renewal is a compare-and-set on that revision. A worker that
//! stopped renewing (killed, stopped, cut off) is noticed by the others when the revision
//! has not moved for the lease timeout, measured on their own monotonic clocks: no clock of
//! another machine is trusted.

use crate::layout::lease_key;
use crate::wire::{GitWorkspace, LeaseRecord};
use crate::ClusterError;
use async_nats::jetstream::kv::{CreateErrorKind, Store, UpdateErrorKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Time since boot, counting time stopped (SIGSTOP) and suspended: a worker that wakes
/// from either sees the whole pause, as the workers that watched its lease did.
fn since_boot() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME)
        .map(Duration::from)
        .unwrap_or(Duration::ZERO)
}

/// A lease this process holds.
pub struct Lease {
    kv: Store,
    key: String,
    thread: String,
    worker: String,
    cwd: PathBuf,
    workspace: Option<GitWorkspace>,
    revision: u64,
    /// When the last successful renewal was sent, on [`since_boot`]'s clock (before its
    /// answer: the server wrote it later, so the others' timeout runs from no earlier).
    renewed_at: Duration,
}

impl Lease {
    /// Takes the lease of a new thread working in `cwd` (checked out from `workspace`,
    /// when it has a git workspace); fails when anyone holds it.
    pub async fn acquire(
        kv: &Store,
        thread: &str,
        worker: &str,
        cwd: &Path,
        workspace: Option<&GitWorkspace>,
    ) -> Result<Self, ClusterError> {
        let key = lease_key(thread);
        let sent = since_boot();
        let revision = kv
            .create(&key, record(worker, cwd, workspace)?)
            .await
            .map_err(|err| match err.kind() {
                CreateErrorKind::AlreadyExists => ClusterError::Fenced {
                    thread: thread.to_string(),
                },
                _ => ClusterError::js(format!("lease {key}"), err),
            })?;
        Ok(Self {
            kv: kv.clone(),
            key,
            thread: thread.to_string(),
            worker: worker.to_string(),
            cwd: cwd.to_path_buf(),
            workspace: workspace.cloned(),
            revision,
            renewed_at: sent,
        })
    }

    /// Takes over a lease whose holder stopped renewing it at `seen_revision`; fails when
    /// it moved since (the holder is alive, or another worker was faster).
    pub async fn take_over(
        kv: &Store,
        thread: &str,
        worker: &str,
        seen: &LeaseRecord,
        seen_revision: u64,
    ) -> Result<Self, ClusterError> {
        let mut lease = Self {
            kv: kv.clone(),
            key: lease_key(thread),
            thread: thread.to_string(),
            worker: worker.to_string(),
            cwd: seen.cwd.clone(),
            workspace: seen.workspace.clone(),
            revision: seen_revision,
            // Stale: the renewal just below sets it.
            renewed_at: Duration::ZERO,
        };
        lease.renew().await?;
        Ok(lease)
    }

    /// Renews the lease: compare-and-set on the revision this process last wrote. A
    /// mismatch means another worker owns the thread now: `Fenced`.
    pub async fn renew(&mut self) -> Result<(), ClusterError> {
        match self.update().await {
            Err(ClusterError::Fenced { .. }) => {
                // An update whose answer was lost (a reconnect) may still have been written:
                // the lease is still ours when its holder is this worker.
                let entry = self
                    .kv
                    .entry(&self.key)
                    .await
                    .map_err(|err| ClusterError::js(format!("lease {}", self.key), err))?;
                let ours = entry.as_ref().is_some_and(|entry| {
                    serde_json::from_slice::<LeaseRecord>(&entry.value)
                        .is_ok_and(|held| held.worker == self.worker)
                        && entry.operation == async_nats::jetstream::kv::Operation::Put
                });
                match entry {
                    Some(entry) if ours && entry.revision != self.revision => {
                        self.revision = entry.revision;
                        self.update().await
                    }
                    _ => Err(ClusterError::Fenced {
                        thread: self.thread.clone(),
                    }),
                }
            }
            other => other,
        }
    }

    /// Whether the last renewal was sent less than `window` ago.
    pub fn renewed_within(&self, window: Duration) -> bool {
        self.renewed_at != Duration::ZERO && since_boot().saturating_sub(self.renewed_at) < window
    }

    async fn update(&mut self) -> Result<(), ClusterError> {
        let sent = since_boot();
        let revision = self
            .kv
            .update(
                &self.key,
                record(&self.worker, &self.cwd, self.workspace.as_ref())?,
                self.revision,
            )
            .await
            .map_err(|err| match err.kind() {
                UpdateErrorKind::WrongLastRevision => ClusterError::Fenced {
                    thread: self.thread.clone(),
                },
                _ => ClusterError::js(format!("lease {}", self.key), err),
            })?;
        self.revision = revision;
        self.renewed_at = sent;
        Ok(())
    }

    pub fn thread(&self) -> &str {
        &self.thread
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The thread's git workspace, if it has one.
    pub fn workspace(&self) -> Option<&GitWorkspace> {
        self.workspace.as_ref()
    }

    /// Gives the lease up (the thread is finished); only if still ours.
    pub async fn release(self) {
        if let Err(err) = self
            .kv
            .delete_expect_revision(&self.key, Some(self.revision))
            .await
        {
            tracing::warn!(key = %self.key, %err, "cannot release the lease");
        }
    }
}

fn record(
    worker: &str,
    cwd: &Path,
    workspace: Option<&GitWorkspace>,
) -> Result<bytes::Bytes, ClusterError> {
    let record = LeaseRecord {
        worker: worker.to_string(),
        at_ms: crate::now_ms(),
        cwd: cwd.to_path_buf(),
        workspace: workspace.cloned(),
    };
    serde_json::to_vec(&record)
        .map(bytes::Bytes::from)
        .map_err(|err| ClusterError::js("lease record", err))
}

/// What a worker has seen of the other workers' leases: per key, the revision and since
/// when (its own monotonic clock) it has not changed.
#[derive(Debug, Default)]
pub struct LeaseWatch {
    seen: HashMap<String, (u64, Instant)>,
}

impl LeaseWatch {
    /// Records `revision` of `key` at `now`; true when that same revision has been seen for
    /// at least `timeout`, i.e. its holder stopped renewing it.
    pub fn expired(&mut self, key: &str, revision: u64, now: Instant, timeout: Duration) -> bool {
        match self.seen.get(key) {
            Some((seen, since)) if *seen == revision => now.duration_since(*since) >= timeout,
            _ => {
                self.seen.insert(key.to_string(), (revision, now));
                false
            }
        }
    }

    /// Forgets keys that are gone (released leases).
    pub fn retain(&mut self, present: &std::collections::HashSet<String>) {
        self.seen.retain(|key, _| present.contains(key));
    }
}

#[cfg(test)]
#[path = "lease_tests.rs"]
mod tests;
