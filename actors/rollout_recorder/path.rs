//! Where a thread's rollout lives: `$TROUPE_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

use std::path::{Path, PathBuf};
use troupe_messages::ids::ThreadId;

/// The rollout path of a thread created now.
pub fn rollout_path(troupe_home: &Path, thread_id: ThreadId) -> PathBuf {
    let now = chrono::Utc::now();
    troupe_home
        .join("sessions")
        .join(now.format("%Y").to_string())
        .join(now.format("%m").to_string())
        .join(now.format("%d").to_string())
        .join(format!(
            "rollout-{}-{thread_id}.jsonl",
            now.format("%Y-%m-%dT%H-%M-%S")
        ))
}

/// The current time as RFC 3339 with milliseconds, UTC.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
