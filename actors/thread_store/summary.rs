//! A rollout condensed to its index entry.

use crate::rollout_recorder::loader::LoadedRollout;
use crate::rollout_recorder::replay::{replay, Tracker};
use std::path::Path;
use troupe_messages::rollout::SessionMeta;
use troupe_messages::threads::ThreadSummary;

/// Milliseconds since the epoch of an RFC 3339 time; 0 when it does not parse.
pub fn time_ms(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.timestamp_millis())
        .unwrap_or(0)
}

/// Whether `path` lies under `$TROUPE_HOME/archived_sessions/`.
pub fn is_archived(home: &std::path::Path, path: &std::path::Path) -> bool {
    path.starts_with(home.join("archived_sessions"))
}

/// The index entry of a thread from what its rollout says — its meta, the replayed
/// `tracker`, the time of its last line — where it lies and how big it is. The one
/// constructor: the live session and the rebuild from files both use it.
pub fn thread_summary(
    meta: &SessionMeta,
    tracker: &Tracker,
    last_timestamp: &str,
    rollout_path: &Path,
    archived: bool,
    rollout_bytes: u64,
) -> ThreadSummary {
    ThreadSummary {
        id: meta.thread_id,
        title: tracker.title.clone(),
        cwd: meta.cwd.clone(),
        parent: meta.parent_thread_id,
        created_at: meta.created_at.clone(),
        updated_at_ms: time_ms(last_timestamp),
        status: tracker.status,
        rollout_path: rollout_path.to_path_buf(),
        archived,
        turns: tracker.turns,
        tokens: tracker.tokens,
        rollout_bytes,
        task_path: meta.agent.as_ref().map(|a| a.task_path.clone()),
        depth: meta.agent.as_ref().map_or(0, |a| a.depth),
        nickname: meta.agent.as_ref().map(|a| a.nickname.clone()),
        model_provider: meta.model_provider.clone(),
    }
}

/// The index entry of a loaded rollout.
pub fn summarize(rollout: &LoadedRollout, archived: bool) -> ThreadSummary {
    let tracker = replay(&rollout.lines).tracker;
    let updated = rollout
        .lines
        .last()
        .map(|line| line.timestamp.as_str())
        .unwrap_or(&rollout.meta.created_at);
    thread_summary(
        &rollout.meta,
        &tracker,
        updated,
        &rollout.path,
        archived,
        rollout.bytes,
    )
}
