//! A rollout condensed to its index entry.

use crate::rollout_recorder::loader::LoadedRollout;
use crate::rollout_recorder::replay::replay;
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

/// The index entry of a loaded rollout.
pub fn summarize(rollout: &LoadedRollout, archived: bool) -> ThreadSummary {
    let tracker = replay(&rollout.lines).tracker;
    let updated = rollout
        .lines
        .last()
        .map(|line| line.timestamp.as_str())
        .unwrap_or(&rollout.meta.created_at);
    ThreadSummary {
        id: rollout.meta.thread_id.to_string(),
        title: tracker.title,
        cwd: rollout.meta.cwd.display().to_string(),
        parent: rollout.meta.parent_thread_id.map(|id| id.to_string()),
        created_at: rollout.meta.created_at.clone(),
        updated_at_ms: time_ms(updated),
        status: tracker.status,
        rollout_path: rollout.path.display().to_string(),
        archived,
        turns: tracker.turns,
        tokens: tracker.tokens,
        rollout_bytes: rollout.bytes,
        task_path: rollout.meta.agent.as_ref().map(|a| a.task_path.clone()),
        depth: rollout.meta.agent.as_ref().map_or(0, |a| a.depth),
        nickname: rollout.meta.agent.as_ref().map(|a| a.nickname.clone()),
    }
}
