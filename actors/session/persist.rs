//! The session's side of durability: what it records, when it forces the rollout to disk,
//! and keeping the thread's index entry current.
//!
//! Every record goes to the recorder at once (written immediately, so a killed process loses
//! at most the line being written). The fsync policy says which records must also be
//! *durable* before the session acknowledges them (emits their event, lets the turn sample
//! again): turn boundaries always, tool results by default, every item when asked.

use crate::rollout_recorder::path::now_rfc3339;
use crate::rollout_recorder::replay::Tracker;
use crate::thread_store::summary::thread_summary;
use crate::thread_store::ThreadStore;
use ractor::ActorRef;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use troupe_messages::events::EventMsg;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::RolloutMsg;
use troupe_messages::rollout::{RolloutLine, RolloutRecord, SessionMeta};
use troupe_messages::settings::FsyncPolicy;
use troupe_messages::threads::{ThreadStatus, ThreadSummary};

/// How long a flush may take before it counts as failed.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `record` must be durable before it is acknowledged, under `policy`.
pub fn needs_sync(policy: FsyncPolicy, record: &RolloutRecord) -> bool {
    let boundary = matches!(
        record,
        RolloutRecord::Event(
            EventMsg::TurnStarted { .. }
                | EventMsg::TurnComplete { .. }
                | EventMsg::TurnAborted { .. }
        ) | RolloutRecord::Compacted(_)
    );
    let tool_result = matches!(
        record,
        RolloutRecord::ResponseItem(
            ResponseItem::FunctionCallOutput { .. } | ResponseItem::CustomToolCallOutput { .. }
        )
    );
    match policy {
        FsyncPolicy::EveryItem => true,
        FsyncPolicy::ToolResults => boundary || tool_result,
        FsyncPolicy::TurnBoundaries => boundary,
    }
}

/// Events that go to the rollout (deltas do not: the finished items carry the same text).
pub fn persisted(msg: &EventMsg) -> bool {
    !msg.is_delta()
        && !matches!(
            msg,
            EventMsg::ItemRecorded { .. }
                | EventMsg::SessionConfigured { .. }
                | EventMsg::ExecCommandBegin { .. }
                | EventMsg::HookStarted { .. }
                | EventMsg::ShutdownComplete
                | EventMsg::AgentEvent { .. }
        )
}

/// A thread's rollout recorder, fsync policy and index entry.
pub struct Persistence {
    pub recorder: ActorRef<RolloutMsg>,
    pub policy: FsyncPolicy,
    /// The thread's index entry writer, when this process holds the index.
    index: Option<IndexWriter>,
    path: PathBuf,
    meta: SessionMeta,
    pub tracker: Tracker,
    last_timestamp: String,
    /// Lines appended since the last successful flush.
    dirty: bool,
    /// Why the rollout can no longer be written (a failed write or fsync, a full disk). Set
    /// once and kept: nothing more can be made durable, so no turn may run.
    pub failure: Option<String>,
}

impl Persistence {
    /// The format version of the rollout being appended to.
    pub fn format_version(&self) -> u32 {
        self.meta.version
    }

    pub fn new(
        recorder: ActorRef<RolloutMsg>,
        policy: FsyncPolicy,
        store: Option<Arc<ThreadStore>>,
        path: PathBuf,
        meta: SessionMeta,
        tracker: Tracker,
        last_timestamp: String,
    ) -> Self {
        Self {
            recorder,
            policy,
            index: store.map(|store| IndexWriter::spawn(store, path.clone())),
            path,
            meta,
            tracker,
            last_timestamp,
            dirty: false,
            failure: None,
        }
    }

    /// Appends records; true when one of them must be durable before it is acknowledged.
    pub fn record(&mut self, records: Vec<RolloutRecord>) -> bool {
        if records.is_empty() {
            return false;
        }
        let timestamp = now_rfc3339();
        let mut sync = false;
        for record in &records {
            self.tracker.apply(record);
            sync |= needs_sync(self.policy, record);
        }
        let lines = records
            .into_iter()
            .map(|record| RolloutLine {
                timestamp: timestamp.clone(),
                record,
            })
            .collect();
        self.last_timestamp = timestamp;
        self.dirty = true;
        let _ = self.recorder.send_message(RolloutMsg::Append(lines));
        sync
    }

    /// Writes and fsyncs everything recorded so far. Err carries a message for the user.
    pub async fn flush(&mut self) -> Result<(), String> {
        if !self.dirty {
            return Ok(());
        }
        let flush = |reply| RolloutMsg::Flush { reply };
        match crate::ask::ask(&self.recorder, flush, FLUSH_TIMEOUT).await {
            Ok(Ok(())) => {
                self.dirty = false;
                Ok(())
            }
            Ok(Err(err)) => Err(err),
            Err(crate::ask::AskError::Timeout) => Err(format!(
                "writing {} timed out after {}s",
                self.path.display(),
                FLUSH_TIMEOUT.as_secs()
            )),
            Err(crate::ask::AskError::Stopped) => Err("the rollout recorder stopped".to_string()),
        }
    }

    /// The index entry as of now; `running` while a turn runs. `rollout_bytes` is left at 0:
    /// the index writer reads the file's size off the handler.
    pub fn summary(&self, running: bool) -> ThreadSummary {
        let mut summary = thread_summary(
            &self.meta,
            &self.tracker,
            &self.last_timestamp,
            &self.path,
            false,
            0,
        );
        if running {
            summary.status = ThreadStatus::Running;
        }
        summary
    }

    /// Queues the index entry (call after a flush, so the size matches the file).
    pub fn update_index(&self, running: bool) {
        if let Some(index) = &self.index {
            index.put(self.summary(running));
        }
    }

    /// Waits until every queued index entry is written (before the thread says it is shut
    /// down: the process may exit right after).
    pub async fn index_written(&self) {
        if let Some(index) = &self.index {
            index.drained().await;
        }
    }
}

/// Writes a thread's index entries in the order they were queued, off the session's
/// handler: the rollout's size (`fs::metadata`), the sled write and its flush run on a
/// blocking thread, one entry at a time.
struct IndexWriter {
    updates: mpsc::UnboundedSender<IndexUpdate>,
}

enum IndexUpdate {
    Put(Box<ThreadSummary>),
    /// Answered once every update queued before it is written.
    Drained(oneshot::Sender<()>),
}

impl IndexWriter {
    fn spawn(store: Arc<ThreadStore>, path: PathBuf) -> Self {
        let (updates, mut queue) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(update) = queue.recv().await {
                match update {
                    IndexUpdate::Put(mut summary) => {
                        let (store, path) = (store.clone(), path.clone());
                        let written = tokio::task::spawn_blocking(move || {
                            summary.rollout_bytes =
                                std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                            // Flushed at once: a process may exit (or be killed) right after a turn.
                            store.put(&summary).and_then(|()| store.flush())
                        })
                        .await;
                        match written {
                            Ok(Ok(())) => {}
                            Ok(Err(err)) => tracing::warn!(%err, "thread index not updated"),
                            Err(err) => tracing::warn!(%err, "thread index writer stopped"),
                        }
                    }
                    IndexUpdate::Drained(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        Self { updates }
    }

    fn put(&self, summary: ThreadSummary) {
        let _ = self.updates.send(IndexUpdate::Put(Box::new(summary)));
    }

    async fn drained(&self) {
        let (done, written) = oneshot::channel();
        if self.updates.send(IndexUpdate::Drained(done)).is_ok() {
            let _ = written.await;
        }
    }
}

#[cfg(test)]
#[path = "persist_tests.rs"]
mod tests;
