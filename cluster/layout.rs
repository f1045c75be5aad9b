//! Names of a pool's subjects, streams, bucket and keys. The pool name is one NATS token, so
//! no name built from it can reach another pool's subjects.

use crate::ClusterError;

/// The names of one pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pool: String,
}

/// Longest pool name (stream names stay well under the server's 255).
const MAX_POOL_LEN: usize = 64;

impl Layout {
    /// The layout of `pool`: letters, digits, `-` and `_` only (no `.`, `*`, `>`, spaces).
    pub fn new(pool: &str) -> Result<Self, ClusterError> {
        if pool.is_empty() || pool.len() > MAX_POOL_LEN {
            return Err(ClusterError::Config(format!(
                "pool `{pool}` must be 1 to {MAX_POOL_LEN} characters"
            )));
        }
        if let Some(bad) = pool
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
        {
            return Err(ClusterError::Config(format!(
                "pool `{pool}` may hold only letters, digits, `-` and `_` (found `{bad}`)"
            )));
        }
        Ok(Self {
            pool: pool.to_string(),
        })
    }

    pub fn pool(&self) -> &str {
        &self.pool
    }

    /// Subject of spawn requests.
    pub fn spawn_subject(&self) -> String {
        format!("troupe.{}.spawn", self.pool)
    }

    /// The work-queue stream of spawn requests.
    pub fn spawn_stream(&self) -> String {
        format!("TROUPE_{}_SPAWN", self.pool)
    }

    /// The durable consumer all workers of the pool share.
    pub fn workers_consumer(&self) -> &'static str {
        "workers"
    }

    /// The stream of every thread's events and rollout lines.
    pub fn threads_stream(&self) -> String {
        format!("TROUPE_{}_THREADS", self.pool)
    }

    /// Subjects of `threads_stream`.
    pub fn threads_wildcard(&self) -> String {
        format!("troupe.{}.thread.*.events", self.pool)
    }

    /// Subject of one thread's events and rollout lines.
    pub fn events_subject(&self, thread: &str) -> Result<String, ClusterError> {
        check_token(thread)?;
        Ok(format!("troupe.{}.thread.{thread}.events", self.pool))
    }

    /// Core subject of requests to the worker running `thread` (interrupt).
    pub fn ops_subject(&self, thread: &str) -> Result<String, ClusterError> {
        check_token(thread)?;
        Ok(format!("troupe.{}.thread.{thread}.ops", self.pool))
    }

    /// The key-value bucket of leases, heartbeats and spawn answers.
    pub fn bucket(&self) -> String {
        format!("TROUPE_{}", self.pool)
    }
}

/// Key of the lease of `thread`.
pub fn lease_key(thread: &str) -> String {
    format!("lease.{thread}")
}

/// Key of the heartbeat of worker `id`.
pub fn worker_key(id: &str) -> String {
    format!("worker.{id}")
}

/// Key of the answer to spawn request `id`.
pub fn spawn_key(id: &str) -> String {
    format!("spawn.{id}")
}

/// An id used inside a subject: one token of letters, digits, `-` and `_` (a thread or
/// request id from a hostile peer must not widen a subscription).
pub fn check_token(id: &str) -> Result<(), ClusterError> {
    if !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Ok(())
    } else {
        Err(ClusterError::Malformed {
            subject: "(id)".into(),
            reason: format!("`{id}` is not a valid id"),
        })
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
