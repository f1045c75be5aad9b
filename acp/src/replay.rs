//! A loaded session's history as `session/update`s: the rollout's user messages and its
//! recorded events through the same mapper as live events. Its sub-agents' rollouts (found
//! on disk) replay as they showed live: each as one tool call, right where it was spawned.

use crate::updates::UpdateMapper;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use troupe_actors::rollout_recorder::loader;
use troupe_actors::thread_store::agents_on_disk::agent_rollouts;
use troupe_messages::agent_notice::{parse_report, task_of_first_message};
use troupe_messages::events::EventMsg;
use troupe_messages::ids::ThreadId;
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::rollout::{RolloutLine, RolloutRecord};

/// A sub-agent's recorded lines, with the task path its updates carry.
#[derive(Debug, Clone, Default)]
pub struct AgentHistory {
    pub task_path: String,
    pub lines: Vec<RolloutLine>,
}

/// The updates of the thread recorded at `rollout` (its agents' rollouts under `home`), and
/// the mapper as they leave it (for the live events that follow). An unreadable rollout
/// replays nothing.
pub async fn history(home: &Path, rollout: &Path) -> (Vec<Value>, UpdateMapper) {
    let (home, path): (PathBuf, PathBuf) = (home.to_path_buf(), rollout.to_path_buf());
    let loaded = tokio::task::spawn_blocking(move || {
        let root = loader::load(&path)?;
        let agents = agent_histories(&home, root.meta.thread_id);
        Ok::<_, loader::RolloutError>((root.lines, agents))
    })
    .await;
    let (lines, mut agents) = match loaded {
        Ok(Ok(loaded)) => loaded,
        Ok(Err(err)) => {
            tracing::warn!(%err, "cannot read the rollout");
            Default::default()
        }
        Err(err) => {
            tracing::warn!(%err, "reading the rollout crashed");
            Default::default()
        }
    };
    let mut mapper = UpdateMapper::default();
    let updates = replay(&mut mapper, &lines, &mut agents);
    (updates, mapper)
}

/// The recorded lines of the agents of `root`'s tree; an unreadable one is left out.
fn agent_histories(home: &Path, root: ThreadId) -> HashMap<ThreadId, AgentHistory> {
    agent_rollouts(home, root)
        .into_iter()
        .filter_map(|agent| match loader::load(&agent.path) {
            Ok(loaded) => Some((
                agent.thread_id,
                AgentHistory {
                    task_path: agent.task_path,
                    lines: loaded.lines,
                },
            )),
            Err(err) => {
                tracing::warn!(%err, "a sub-agent's rollout is not replayed");
                None
            }
        })
        .collect()
}

/// The updates `lines` stand for; the histories of the agents it spawned (taken from
/// `agents`) follow each spawn.
pub fn replay(
    mapper: &mut UpdateMapper,
    lines: &[RolloutLine],
    agents: &mut HashMap<ThreadId, AgentHistory>,
) -> Vec<Value> {
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
            RolloutRecord::Event(msg) => {
                updates.extend(mapper.on_event(msg));
                replay_spawned(mapper, msg, agents, &mut updates);
            }
            RolloutRecord::ResponseItem(_)
            | RolloutRecord::SessionMeta(_)
            | RolloutRecord::TurnContext(_)
            | RolloutRecord::Compacted(_) => {}
        }
    }
    updates
}

/// When `msg` is a spawn that named its agents, their recorded events as the root's
/// subscribers saw them (`AgentEvent`s), grandchildren after their own spawn.
fn replay_spawned(
    mapper: &mut UpdateMapper,
    msg: &EventMsg,
    agents: &mut HashMap<ThreadId, AgentHistory>,
    updates: &mut Vec<Value>,
) {
    let EventMsg::CollabToolCall {
        tool,
        receiver_thread_ids,
        ..
    } = msg
    else {
        return;
    };
    if tool != "spawn_agent" {
        return;
    }
    for thread_id in receiver_thread_ids {
        // Taken out: each agent replays once, and a malformed tree cannot loop.
        let Some(agent) = agents.remove(thread_id) else {
            continue;
        };
        for line in &agent.lines {
            let RolloutRecord::Event(event) = &line.record else {
                continue;
            };
            updates.extend(mapper.on_event(&EventMsg::AgentEvent {
                thread_id: *thread_id,
                task_path: agent.task_path.clone(),
                msg: Box::new(event.clone()),
            }));
            replay_spawned(mapper, event, agents, updates);
        }
    }
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
