//! The agent tree: every live sub-agent of this process, by thread id, with its task path,
//! parent, status and the inbox of news for each parent.
//!
//! Shared (`Arc`) by the thread manager, the sessions (interrupt and close cascade) and the
//! collaboration tools; every operation holds the lock only for bookkeeping, never across
//! an await. Roots are registered the first time they use a collaboration tool.

use super::paths::under;
use crate::approvals::cache::ApprovalCache;
use crate::locking::lock;
use ractor::ActorRef;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio_util::task::AbortOnDropHandle;
use troupe_messages::agents::{AgentStatus, ROOT_TASK_PATH};
use troupe_messages::cluster::Placement;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::ops::{Op, Submission};
use troupe_messages::settings::SessionSettings;

/// One sub-agent.
pub struct AgentNode {
    pub thread_id: ThreadId,
    pub parent: ThreadId,
    pub root: ThreadId,
    pub task_path: String,
    pub depth: u32,
    pub nickname: String,
    pub status: AgentStatus,
    /// Its session; none for an agent re-attached from the index after its process died
    /// (its thread is on disk, not running).
    pub session: Option<ActorRef<SessionMsg>>,
    /// Its last final answer (or error), once it has one.
    pub last_answer: Option<String>,
    /// The task that reads the child's events; dropped (aborted) with the node.
    pub watcher: Option<AbortOnDropHandle<()>>,
    /// The git worktree it works in (`spawn_agent {worktree: true}`), until retired.
    pub worktree: Option<WorktreeSlot>,
    /// Set for an agent placed on a worker of the pool (its `session` is then the
    /// `RemoteSessionActor` standing in for it).
    pub remote: Option<RemoteLink>,
}

/// How to reach a remote agent's thread on its worker.
#[derive(Clone)]
pub struct RemoteLink {
    pub cluster: troupe_cluster::Cluster,
    pub thread: String,
    /// The thread's keys: requests to its worker are signed with them.
    pub keys: troupe_cluster::sign::ThreadKeys,
}

/// A child's worktree: taken (`None`) by whoever retires it first, its watcher or its
/// closing root, so it is retired once and the other waits until that is done.
pub type WorktreeSlot = Arc<tokio::sync::Mutex<Option<super::worktree::Worktree>>>;

/// An agent of a resumed root's tree, as the index knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reattached {
    pub thread_id: ThreadId,
    pub parent: ThreadId,
    pub task_path: String,
    pub depth: u32,
    pub nickname: String,
    pub status: AgentStatus,
    /// What the root's next `wait_agent` is told about it (none for a completed agent,
    /// whose answer was delivered).
    pub news: Option<String>,
}

/// A copy of what `list_agents` shows of one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentView {
    pub thread_id: ThreadId,
    pub task_path: String,
    pub nickname: String,
    pub status: AgentStatus,
    pub depth: u32,
}

/// Something a parent's `wait_agent` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentNews {
    pub from_path: String,
    pub thread_id: ThreadId,
    pub kind: NewsKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewsKind {
    /// The agent's turn ended (completed, interrupted or failed) with this answer.
    Finished { status: AgentStatus, answer: String },
    /// A message it sent with `send_message`.
    Message { text: String },
}

#[derive(Default)]
struct Inbox {
    news: VecDeque<AgentNews>,
    notify: Arc<Notify>,
}

#[derive(Default)]
struct TreeState {
    agents: HashMap<ThreadId, AgentNode>,
    roots: HashMap<ThreadId, ActorRef<SessionMsg>>,
    inboxes: HashMap<ThreadId, Inbox>,
    /// Task paths of spawns in progress, by root: taken before the thread starts, so two
    /// spawns with the same name (or past the limit) in one batch cannot both pass.
    reserved: HashMap<(ThreadId, String), Placement>,
    /// Tokens used so far by each thread of a tree (its session's running total), with
    /// the root of its tree: what `[agents] token_budget` is checked against.
    tokens: HashMap<ThreadId, (ThreadId, u64)>,
    /// Tasks reading each registered root's token counts.
    root_watchers: HashMap<ThreadId, AbortOnDropHandle<()>>,
    /// "Approved for the session" answers, one memory per tree (by root): an answer given
    /// to one agent holds for its siblings, its parent and its children.
    approvals: HashMap<ThreadId, Arc<Mutex<ApprovalCache>>>,
}

/// The registry of agent trees of one runtime.
#[derive(Default)]
pub struct AgentTree {
    state: Mutex<TreeState>,
    /// Commands running at once across every thread of the runtime (made on first use).
    command_budget: std::sync::OnceLock<Arc<tokio::sync::Semaphore>>,
    spawned: AtomicUsize,
    submissions: AtomicUsize,
    /// Connections to worker pools and this runtime's thread index, for remote agents.
    pub remote: super::remote::RemotePool,
}

/// Who is calling a collaboration tool.
#[derive(Debug, Clone)]
pub struct Caller {
    pub thread_id: ThreadId,
    pub root: ThreadId,
    pub task_path: String,
    pub depth: u32,
}

impl AgentTree {
    /// The caller's place; a thread not in the tree is a root (registered now).
    pub fn caller(self: &Arc<Self>, thread_id: ThreadId, session: &ActorRef<SessionMsg>) -> Caller {
        let mut state = lock(&self.state);
        if let Some(node) = state.agents.get(&thread_id) {
            return Caller {
                thread_id,
                root: node.root,
                task_path: node.task_path.clone(),
                depth: node.depth,
            };
        }
        if state.roots.insert(thread_id, session.clone()).is_none() {
            // A new root: its own tokens count towards its tree's budget.
            let (events, receiver) = tokio::sync::mpsc::channel(ROOT_EVENTS_CAPACITY);
            if session
                .send_message(SessionMsg::Subscribe { events })
                .is_ok()
            {
                let task = tokio::spawn(count_root_tokens(self.clone(), thread_id, receiver));
                state
                    .root_watchers
                    .insert(thread_id, AbortOnDropHandle::new(task));
            }
        }
        Caller {
            thread_id,
            root: thread_id,
            task_path: ROOT_TASK_PATH.to_string(),
            depth: 0,
        }
    }

    /// The runtime's command budget: the first thread to ask sizes it, from its
    /// `[agents] max_concurrent_commands` (default 4 × the CPU cores).
    pub fn command_budget(&self, settings: &SessionSettings) -> Arc<tokio::sync::Semaphore> {
        self.command_budget
            .get_or_init(|| {
                let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
                let size = settings.agents.max_concurrent_commands.unwrap_or(4 * cores);
                Arc::new(tokio::sync::Semaphore::new(size.max(1)))
            })
            .clone()
    }

    /// The root whose files the local agent `thread_id` works in; none for a root, a remote
    /// agent or one in a git worktree of its own.
    pub fn files_root(&self, thread_id: ThreadId) -> Option<ThreadId> {
        let state = lock(&self.state);
        let node = state.agents.get(&thread_id)?;
        (node.worktree.is_none() && node.remote.is_none()).then_some(node.root)
    }

    /// A number for the next agent's nickname.
    pub fn next_spawn_number(&self) -> usize {
        self.spawned.fetch_add(1, Ordering::Relaxed)
    }

    /// Reserves `path` in `root`'s tree for a spawn placed `at` (`Local` or `Remote`):
    /// refused when the path is taken (by a live or closed agent) or, for a local agent,
    /// when `max_threads` local agents are live or being spawned (remote agents take slots
    /// of the pool's workers instead; a request no worker takes fails at its deadline).
    pub fn reserve(
        &self,
        root: ThreadId,
        path: &str,
        max_threads: usize,
        at: Placement,
    ) -> Result<(), String> {
        let mut state = lock(&self.state);
        let taken = state
            .agents
            .values()
            .any(|n| n.root == root && n.task_path == path)
            || state.reserved.contains_key(&(root, path.to_string()));
        if taken {
            return Err(format!(
                "an agent named `{path}` already exists in this tree; choose another task_name \
                 (or use followup_task to give it more work)"
            ));
        }
        let live = local_live(&state, root);
        if at != Placement::Remote && live >= max_threads {
            return Err(format!(
                "cannot spawn `{path}`: {live} agents are already open in this tree and the \
                 limit is {max_threads} (agents.max_threads); close_agent one that is done first"
            ));
        }
        state.reserved.insert((root, path.to_string()), at);
        Ok(())
    }

    /// Local agents of `root` live or being spawned (what `placement: "auto"` weighs
    /// against `max_threads`).
    pub fn local_live(&self, root: ThreadId) -> usize {
        local_live(&lock(&self.state), root)
    }

    /// How to reach `thread_id` when it is a remote agent.
    pub fn remote_link(&self, thread_id: ThreadId) -> Option<RemoteLink> {
        lock(&self.state)
            .agents
            .get(&thread_id)
            .and_then(|n| n.remote.clone())
    }

    /// Ends a reservation (the spawn failed, or its node is now inserted).
    pub fn release(&self, root: ThreadId, path: &str) {
        lock(&self.state).reserved.remove(&(root, path.to_string()));
    }

    /// Sub-agents of `root` not closed.
    pub fn live_count(&self, root: ThreadId) -> usize {
        lock(&self.state)
            .agents
            .values()
            .filter(|n| n.root == root && n.status != AgentStatus::Closed)
            .count()
    }

    /// The thread holding `path` in `root`'s tree (closed agents keep their path).
    pub fn by_path(&self, root: ThreadId, path: &str) -> Option<ThreadId> {
        let state = lock(&self.state);
        if path == ROOT_TASK_PATH {
            return state.roots.contains_key(&root).then_some(root);
        }
        state
            .agents
            .values()
            .find(|n| n.root == root && n.task_path == path)
            .map(|n| n.thread_id)
    }

    /// Whether `thread_id` is `root` itself or one of its agents.
    pub fn in_tree(&self, root: ThreadId, thread_id: ThreadId) -> bool {
        if root == thread_id {
            return true;
        }
        lock(&self.state)
            .agents
            .get(&thread_id)
            .is_some_and(|n| n.root == root)
    }

    /// Adds a spawned agent and ends its path's reservation.
    pub fn insert(&self, node: AgentNode) {
        let mut state = lock(&self.state);
        state.reserved.remove(&(node.root, node.task_path.clone()));
        state.agents.insert(node.thread_id, node);
    }

    pub fn set_watcher(&self, thread_id: ThreadId, watcher: AbortOnDropHandle<()>) {
        if let Some(node) = lock(&self.state).agents.get_mut(&thread_id) {
            node.watcher = Some(watcher);
        }
    }

    /// Status and task path of an agent (a root is `/root`, running).
    pub fn view(&self, thread_id: ThreadId) -> Option<AgentView> {
        let state = lock(&self.state);
        if state.roots.contains_key(&thread_id) {
            return Some(AgentView {
                thread_id,
                task_path: ROOT_TASK_PATH.to_string(),
                nickname: "root".to_string(),
                status: AgentStatus::Running,
                depth: 0,
            });
        }
        state.agents.get(&thread_id).map(node_view)
    }

    /// The session of a live agent or root.
    pub fn session(&self, thread_id: ThreadId) -> Option<ActorRef<SessionMsg>> {
        let state = lock(&self.state);
        if let Some(root) = state.roots.get(&thread_id) {
            return Some(root.clone());
        }
        state
            .agents
            .get(&thread_id)
            .filter(|n| n.status != AgentStatus::Closed)
            .and_then(|n| n.session.clone())
    }

    /// Live agents of `root` under `prefix`, by task path.
    pub fn list(&self, root: ThreadId, prefix: Option<&str>) -> Vec<AgentView> {
        let state = lock(&self.state);
        let mut views: Vec<AgentView> = state
            .agents
            .values()
            .filter(|n| n.root == root && n.status != AgentStatus::Closed)
            .filter(|n| prefix.is_none_or(|p| under(&n.task_path, p)))
            .map(node_view)
            .collect();
        views.sort_by(|a, b| a.task_path.cmp(&b.task_path));
        views
    }

    /// Sets an agent's status; returns the one it had.
    pub fn set_status(&self, thread_id: ThreadId, status: AgentStatus) -> Option<AgentStatus> {
        let mut state = lock(&self.state);
        let node = state.agents.get_mut(&thread_id)?;
        Some(std::mem::replace(&mut node.status, status))
    }

    /// Records a child's final answer and puts the news in its parent's inbox.
    pub fn finished(&self, thread_id: ThreadId, status: AgentStatus, answer: String) {
        let mut state = lock(&self.state);
        let Some(node) = state.agents.get_mut(&thread_id) else {
            return;
        };
        node.status = status;
        node.last_answer = Some(answer.clone());
        let news = AgentNews {
            from_path: node.task_path.clone(),
            thread_id,
            kind: NewsKind::Finished { status, answer },
        };
        let parent = node.parent;
        push_news(&mut state, parent, news);
    }

    /// A message for `to`'s inbox (`send_message` to an agent's parent or any agent).
    pub fn message(&self, to: ThreadId, news: AgentNews) {
        push_news(&mut lock(&self.state), to, news);
    }

    /// Every news in `thread_id`'s inbox, and whether any agent could still send some (a
    /// running agent of its tree other than itself, or its open root).
    pub fn take_news(&self, caller: &Caller) -> (Vec<AgentNews>, bool, Arc<Notify>) {
        let mut state = lock(&self.state);
        // A sub-agent may be waiting for its root's message: an open root counts as live.
        let root_open = caller.thread_id != caller.root && state.roots.contains_key(&caller.root);
        let anyone_live = root_open
            || state.agents.values().any(|n| {
                n.root == caller.root
                    && n.thread_id != caller.thread_id
                    && matches!(n.status, AgentStatus::Running)
            });
        let inbox = state.inboxes.entry(caller.thread_id).or_default();
        let news = inbox.news.drain(..).collect();
        (news, anyone_live, inbox.notify.clone())
    }

    /// Sessions of every agent below `thread_id` (children, grandchildren…) that are not
    /// closed, deepest first.
    pub fn descendants(&self, thread_id: ThreadId) -> Vec<(ThreadId, ActorRef<SessionMsg>)> {
        let state = lock(&self.state);
        let mut found: Vec<&AgentNode> = state
            .agents
            .values()
            .filter(|n| n.status != AgentStatus::Closed && descends(&state, n, thread_id))
            .collect();
        found.sort_by_key(|n| std::cmp::Reverse(n.depth));
        found
            .into_iter()
            .filter_map(|n| Some((n.thread_id, n.session.clone()?)))
            .collect()
    }

    /// Why an agent of the tree has no session, when it was re-attached after its process
    /// died: what the model should do instead.
    pub fn detached(&self, thread_id: ThreadId) -> Option<String> {
        let state = lock(&self.state);
        let node = state.agents.get(&thread_id)?;
        node.session.is_none().then(|| {
            format!(
                "`{}` ran in a process that has stopped; its thread {} is kept on disk and \
                 resumes on its own (`troupe exec resume {}`), not from this tree",
                node.task_path, node.thread_id, node.thread_id
            )
        })
    }

    /// Re-attaches to `root` (resumed after its process died) the agents of its tree found
    /// in the index, without sessions: `list_agents` shows them, and one news per agent
    /// whose turn did not complete tells the root's next `wait_agent`.
    pub fn reattach(
        self: &Arc<Self>,
        root: ThreadId,
        session: &ActorRef<SessionMsg>,
        agents: Vec<Reattached>,
    ) {
        if agents.is_empty() {
            return;
        }
        let _ = self.caller(root, session);
        let mut state = lock(&self.state);
        for agent in agents {
            if state.agents.contains_key(&agent.thread_id) {
                continue;
            }
            if let Some(answer) = &agent.news {
                let news = AgentNews {
                    from_path: agent.task_path.clone(),
                    thread_id: agent.thread_id,
                    kind: NewsKind::Finished {
                        status: agent.status,
                        answer: answer.clone(),
                    },
                };
                push_news(&mut state, agent.parent, news);
            }
            state.agents.insert(
                agent.thread_id,
                AgentNode {
                    thread_id: agent.thread_id,
                    parent: agent.parent,
                    root,
                    task_path: agent.task_path,
                    depth: agent.depth,
                    nickname: agent.nickname,
                    status: agent.status,
                    session: None,
                    last_answer: agent.news,
                    watcher: None,
                    worktree: None,
                    remote: None,
                },
            );
        }
    }

    /// Records the running token total of `thread_id`, a thread of `root`'s tree.
    pub fn record_tokens(&self, thread_id: ThreadId, root: ThreadId, total: u64) {
        lock(&self.state).tokens.insert(thread_id, (root, total));
    }

    /// Tokens used so far by `root` and every agent of its tree.
    pub fn tree_tokens(&self, root: ThreadId) -> u64 {
        lock(&self.state)
            .tokens
            .values()
            .filter(|(r, _)| *r == root)
            .map(|(_, n)| n)
            .sum()
    }

    /// `[agents] token_budget`: refuses new work (a spawn, a follow-up task) once the
    /// tree has used more tokens than the budget. Running turns are left to finish.
    pub fn check_budget(
        &self,
        root: ThreadId,
        budget: Option<u64>,
        what: &str,
    ) -> Result<(), String> {
        let Some(budget) = budget else {
            return Ok(());
        };
        let used = self.tree_tokens(root);
        if used > budget {
            return Err(format!(
                "cannot {what}: this agent tree has used {used} tokens, over its budget of \
                 {budget} (agents.token_budget); agents already running finish their turns, \
                 but no new work can start: wait for them and answer with what you have"
            ));
        }
        Ok(())
    }

    /// Worktrees of the agents below `thread_id`, with their task paths (to retire them
    /// once they are closed).
    pub fn worktrees_below(&self, thread_id: ThreadId) -> Vec<(String, WorktreeSlot)> {
        let state = lock(&self.state);
        state
            .agents
            .values()
            .filter(|n| descends(&state, n, thread_id))
            .filter_map(|n| Some((n.task_path.clone(), n.worktree.clone()?)))
            .collect()
    }

    /// The cancellation tree: interrupting a thread's turn interrupts every running turn
    /// below it.
    pub fn interrupt_descendants(&self, thread_id: ThreadId) {
        for (_, session) in self.descendants(thread_id) {
            self.submit(&session, Op::Interrupt);
        }
    }

    /// Closing a thread closes every agent below it; returns their sessions, so the caller
    /// can wait for them to be gone.
    pub fn close_descendants(&self, thread_id: ThreadId) -> Vec<ActorRef<SessionMsg>> {
        let sessions: Vec<ActorRef<SessionMsg>> = self
            .descendants(thread_id)
            .into_iter()
            .map(|(_, session)| session)
            .collect();
        for session in &sessions {
            self.submit(session, Op::Shutdown);
        }
        let mut state = lock(&self.state);
        state.roots.remove(&thread_id);
        state.root_watchers.remove(&thread_id);
        state.approvals.remove(&thread_id);
        drop(state);
        sessions
    }

    /// The "approved for the session" memory of the tree `member` belongs to (`member` is
    /// the thread itself for a root, or any thread above a starting agent).
    pub fn tree_approvals(&self, member: ThreadId) -> Arc<Mutex<ApprovalCache>> {
        let mut state = lock(&self.state);
        let root = state.agents.get(&member).map_or(member, |node| node.root);
        state.approvals.entry(root).or_default().clone()
    }

    /// Sends an op to a session, with an id naming the agent tree as its source.
    pub fn submit(&self, session: &ActorRef<SessionMsg>, op: Op) -> bool {
        let n = self.submissions.fetch_add(1, Ordering::Relaxed);
        session
            .send_message(SessionMsg::Submit(Submission {
                id: format!("agents-{n}"),
                op,
            }))
            .is_ok()
    }
}

/// Events a root may have queued for the task counting its tokens.
const ROOT_EVENTS_CAPACITY: usize = 256;

/// Follows a root's token counts until its thread stops.
async fn count_root_tokens(
    tree: Arc<AgentTree>,
    root: ThreadId,
    mut events: tokio::sync::mpsc::Receiver<troupe_messages::events::Event>,
) {
    while let Some(event) = events.recv().await {
        if let troupe_messages::events::EventMsg::TokenCount { total, .. } = event.msg {
            tree.record_tokens(root, root, total.total_tokens);
        }
    }
}

fn local_live(state: &TreeState, root: ThreadId) -> usize {
    let agents = state
        .agents
        .values()
        .filter(|n| n.root == root && n.status != AgentStatus::Closed && n.remote.is_none())
        .count();
    let reserved = state
        .reserved
        .iter()
        .filter(|((r, _), at)| *r == root && **at != Placement::Remote)
        .count();
    agents + reserved
}

fn node_view(n: &AgentNode) -> AgentView {
    AgentView {
        thread_id: n.thread_id,
        task_path: n.task_path.clone(),
        nickname: n.nickname.clone(),
        status: n.status,
        depth: n.depth,
    }
}

fn descends(state: &TreeState, node: &AgentNode, ancestor: ThreadId) -> bool {
    let mut parent = node.parent;
    loop {
        if parent == ancestor {
            return true;
        }
        match state.agents.get(&parent) {
            Some(up) => parent = up.parent,
            None => return false,
        }
    }
}

fn push_news(state: &mut TreeState, to: ThreadId, news: AgentNews) {
    let inbox = state.inboxes.entry(to).or_default();
    inbox.news.push_back(news);
    // `notify_one` keeps a permit, so a waiter that registers later still wakes.
    inbox.notify.notify_one();
}
