//! A root resumed after its process died (a SIGKILL mid-investigation) or stopped: its
//! agents are on disk, not running. They are re-attached to the resumed root from the index
//! (or, in a runtime without one, from the rollout files), so `list_agents` shows them and
//! `wait_agent` reports the ones whose turn never ended.

use super::tree::{AgentTree, Reattached};
use crate::thread_store::{agents_on_disk, reconcile, ThreadStore};
use ractor::ActorRef;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use troupe_messages::agents::AgentStatus;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::threads::{ThreadStatus, ThreadSummary};

/// The agents of `root`'s tree in `summaries` (children, grandchildren…), parents first.
pub fn tree_of(summaries: &[ThreadSummary], root: ThreadId) -> Vec<Reattached> {
    let mut members: HashSet<ThreadId> = HashSet::from([root]);
    let mut found = Vec::new();
    loop {
        let next: Vec<&ThreadSummary> = summaries
            .iter()
            .filter(|s| !members.contains(&s.id) && s.task_path.is_some())
            .filter(|s| s.parent.is_some_and(|p| members.contains(&p)))
            .collect();
        if next.is_empty() {
            break;
        }
        for summary in next {
            members.insert(summary.id);
            found.push(reattached(summary));
        }
    }
    found.sort_by_key(|a| a.depth);
    found
}

fn reattached(summary: &ThreadSummary) -> Reattached {
    let id = summary.id;
    let (status, news) = match summary.status {
        ThreadStatus::Completed => (AgentStatus::Completed, None),
        ThreadStatus::Interrupted => (
            AgentStatus::Interrupted,
            Some(format!(
                "its last turn was interrupted before its process stopped; its thread is kept \
                 (`troupe exec resume {id}` continues it)"
            )),
        ),
        ThreadStatus::New
        | ThreadStatus::Running
        | ThreadStatus::Failed
        | ThreadStatus::Incomplete => (
            AgentStatus::Failed,
            Some(format!(
                "its process stopped before its turn ended ({}); nothing it recorded is lost: \
                 its thread is kept (`troupe exec resume {id}` continues it)",
                summary.status.as_str()
            )),
        ),
    };
    Reattached {
        thread_id: id,
        parent: summary.parent.unwrap_or(id),
        task_path: summary.task_path.clone().unwrap_or_default(),
        depth: summary.depth,
        nickname: summary.nickname.clone().unwrap_or_default(),
        status,
        news,
    }
}

/// Re-attaches the agents of the resumed root `root` found in the index (brought up to date
/// with the rollouts on disk first, since the dead process may not have written it).
pub async fn reattach_from_index(
    tree: &Arc<AgentTree>,
    store: Arc<ThreadStore>,
    home: PathBuf,
    root: ThreadId,
    session: &ActorRef<SessionMsg>,
) {
    let found = tokio::task::spawn_blocking(move || {
        if let Err(err) = reconcile::reconcile(&store, &home) {
            tracing::warn!("index not reconciled before re-attaching agents: {err}");
        }
        store
            .all()
            .map(|all| tree_of(&all, root))
            .map_err(|err| err.to_string())
    })
    .await;
    attach(tree, root, session, found);
}

/// Re-attaches the agents of the resumed root `root` found in the rollout files under
/// `home`, for a runtime without the index.
pub async fn reattach_from_disk(
    tree: &Arc<AgentTree>,
    home: PathBuf,
    root: ThreadId,
    session: &ActorRef<SessionMsg>,
) {
    let found = tokio::task::spawn_blocking(move || {
        let (summaries, unreadable) = agents_on_disk::agent_summaries(&home, root);
        for problem in unreadable {
            tracing::warn!("an agent of {root} is not re-attached: {problem}");
        }
        Ok(tree_of(&summaries, root))
    })
    .await;
    attach(tree, root, session, found);
}

fn attach(
    tree: &Arc<AgentTree>,
    root: ThreadId,
    session: &ActorRef<SessionMsg>,
    found: Result<Result<Vec<Reattached>, String>, tokio::task::JoinError>,
) {
    match found {
        Ok(Ok(agents)) => tree.reattach(root, session, agents),
        Ok(Err(err)) => tracing::warn!("cannot re-attach the agents of {root}: {err}"),
        Err(err) => tracing::warn!("cannot re-attach the agents of {root}: {err}"),
    }
}
