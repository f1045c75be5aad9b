//! Thread fields Codex's `Thread` carries that come from the rollout's head: the Git state
//! recorded when the thread started.

use std::path::Path;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use troupe_app_server_protocol::protocol::GitInfo;
use troupe_messages::rollout::{RolloutLine, RolloutRecord};

/// The session meta line is small; a first line longer than this is not one.
const HEAD_LIMIT: u64 = 256 * 1024;

/// The Git state `session_meta` recorded when the thread started (none outside Git, or for a
/// rollout that cannot be read). Troupe records no remote URL.
pub async fn git_info(rollout: &Path) -> Option<GitInfo> {
    let file = tokio::fs::File::open(rollout).await.ok()?;
    let mut head = String::new();
    BufReader::new(file.take(HEAD_LIMIT))
        .read_line(&mut head)
        .await
        .ok()?;
    let line: RolloutLine = serde_json::from_str(head.trim_end()).ok()?;
    match line.record {
        RolloutRecord::SessionMeta(meta) => meta.git.map(|git| GitInfo {
            sha: git.commit,
            branch: git.branch,
            origin_url: None,
        }),
        _ => None,
    }
}
