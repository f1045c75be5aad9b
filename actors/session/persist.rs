//! The session's side of durability: what it records, when it forces the rollout to disk,
//! and keeping the thread's index entry current.
//!
//! Every record goes to the recorder at once (written immediately, so a killed process loses
//! at most the line being written). The fsync policy says which records must also be
//! *durable* before the session acknowledges them (emits their event, lets the turn sample
//! again): turn boundaries always, tool results by default, every item when asked.

use crate::rollout_recorder::path::now_rfc3339;
use crate::rollout_recorder::replay::Tracker;
use crate::thread_store::summary::time_ms;
use crate::thread_store::ThreadStore;
use ractor::ActorRef;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
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
                | EventMsg::ShutdownComplete
                | EventMsg::AgentEvent { .. }
        )
}

/// A thread's rollout recorder, fsync policy and index entry.
pub struct Persistence {
    pub recorder: ActorRef<RolloutMsg>,
    pub policy: FsyncPolicy,
    store: Option<Arc<ThreadStore>>,
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
            store,
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
        let result = self
            .recorder
            .call(|reply| RolloutMsg::Flush { reply }, Some(FLUSH_TIMEOUT))
            .await;
        match result {
            Ok(ractor::rpc::CallResult::Success(Ok(()))) => {
                self.dirty = false;
                Ok(())
            }
            Ok(ractor::rpc::CallResult::Success(Err(err))) => Err(err),
            Ok(ractor::rpc::CallResult::Timeout) => Err(format!(
                "writing {} timed out after {}s",
                self.path.display(),
                FLUSH_TIMEOUT.as_secs()
            )),
            Ok(ractor::rpc::CallResult::SenderError) | Err(_) => {
                Err("the rollout recorder stopped".to_string())
            }
        }
    }

    /// The index entry as of now; `running` while a turn runs.
    pub fn summary(&self, running: bool) -> ThreadSummary {
        ThreadSummary {
            id: self.meta.thread_id.to_string(),
            title: self.tracker.title.clone(),
            cwd: self.meta.cwd.display().to_string(),
            parent: self.meta.parent_thread_id.map(|id| id.to_string()),
            created_at: self.meta.created_at.clone(),
            updated_at_ms: time_ms(&self.last_timestamp),
            status: if running {
                ThreadStatus::Running
            } else {
                self.tracker.status
            },
            rollout_path: self.path.display().to_string(),
            archived: false,
            turns: self.tracker.turns,
            tokens: self.tracker.tokens,
            rollout_bytes: std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0),
            task_path: self.meta.agent.as_ref().map(|a| a.task_path.clone()),
            depth: self.meta.agent.as_ref().map_or(0, |a| a.depth),
            nickname: self.meta.agent.as_ref().map(|a| a.nickname.clone()),
        }
    }

    /// Writes the index entry (call after a flush, so the size matches the file).
    pub fn update_index(&self, running: bool) {
        let Some(store) = &self.store else {
            return;
        };
        // Flushed at once: a process may exit (or be killed) right after a turn.
        if let Err(err) = store
            .put(&self.summary(running))
            .and_then(|()| store.flush())
        {
            tracing::warn!(%err, "thread index not updated");
        }
    }
}

#[cfg(test)]
#[path = "persist_tests.rs"]
mod tests;
