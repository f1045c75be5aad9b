//! A loaded session's history as `session/update`s: the rollout's user messages and its
//! recorded events through the same mapper as live events.

use crate::updates::UpdateMapper;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use troupe_actors::agents::notice::{parse_report, task_of_first_message};
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::rollout::{RolloutLine, RolloutRecord};

/// The updates of the thread recorded at `rollout`, and the mapper as they leave it (for the
/// live events that follow). An unreadable rollout replays nothing.
pub async fn history(rollout: &Path) -> (Vec<Value>, UpdateMapper) {
    let path: PathBuf = rollout.to_path_buf();
    let lines = tokio::task::spawn_blocking(move || {
        troupe_actors::rollout_recorder::loader::load(&path).map(|loaded| loaded.lines)
    })
    .await;
    let lines = match lines {
        Ok(Ok(lines)) => lines,
        Ok(Err(err)) => {
            tracing::warn!(%err, "cannot read the rollout");
            Vec::new()
        }
        Err(err) => {
            tracing::warn!(%err, "reading the rollout crashed");
            Vec::new()
        }
    };
    let mut mapper = UpdateMapper::default();
    let updates = replay(&mut mapper, &lines);
    (updates, mapper)
}

/// The updates `lines` stand for.
pub fn replay(mapper: &mut UpdateMapper, lines: &[RolloutLine]) -> Vec<Value> {
    let mut updates = Vec::new();
    for line in lines {
        match &line.record {
            RolloutRecord::ResponseItem(ResponseItem::Message {
                role: Role::User,
                content,
                ..
            }) => {
                let text: String = content.iter().filter_map(ContentItem::text).collect();
                // Sub-agents' reports and the context Troupe adds are not what the user typed.
                if parse_report(&text).is_some() || is_context(&text) {
                    continue;
                }
                let text = task_of_first_message(&text);
                updates.push(json!({
                    "sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": text},
                }));
            }
            RolloutRecord::Event(msg) => updates.extend(mapper.on_event(msg)),
            RolloutRecord::ResponseItem(_)
            | RolloutRecord::SessionMeta(_)
            | RolloutRecord::TurnContext(_)
            | RolloutRecord::Compacted(_) => {}
        }
    }
    updates
}

/// Whether a user-role message is context Troupe wrote (instructions, environment), which
/// it marks with a leading tag.
fn is_context(text: &str) -> bool {
    let start = text.trim_start();
    [
        "<environment_context>",
        "<user_instructions>",
        "<permissions instructions>",
        "# AGENTS.md instructions",
        "<skills>",
        "<collaboration_mode>",
    ]
    .iter()
    .any(|tag| start.starts_with(tag))
}
