//! A sub-agent placed on a worker of the pool (`spawn_agent {placement: "remote"}`).
//!
//! In the parent's tree it has the same handle a local child has, an
//! `ActorRef<SessionMsg>`: the [`RemoteSessionActor`] stands in for the session that runs on
//! the worker. Its follower task reads the thread's subject by stream sequence (resuming
//! after the last one seen across reconnects, see `troupe_cluster::follow`), hands every
//! event to the subscribers (the child's watcher first, so `wait_agent`, the tree's status
//! and the root's activity are fed as for a local child), and mirrors every rollout line
//! into this runtime's `TROUPE_HOME`, indexed when the thread ends there. Ops sent to the
//! mailbox (the interrupt and close cascades) become requests on the thread's ops subject.

use super::git_workspace::{bring_back, BasePushed};
use crate::locking::lock;
use crate::thread_store::ThreadStore;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::mpsc;
use tokio_util::task::AbortOnDropHandle;
use troupe_cluster::follow::ThreadFollower;
use troupe_cluster::mirror::RolloutMirror;
use troupe_cluster::sign::ThreadKeys;
use troupe_cluster::spawn::thread_request;
use troupe_cluster::wire::{End, Kind, ThreadRequest, WorkspaceOutcome};
use troupe_cluster::{Cluster, ClusterError, ClusterOptions};
use troupe_messages::cluster::ClusterConfig;
use troupe_messages::errors::TurnError;
use troupe_messages::events::{Event, EventMsg};
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::ops::Op;

/// Connections to worker pools (one per server and pool, made on first use) and this
/// runtime's thread index (where mirrored rollouts are listed).
#[derive(Default)]
pub struct RemotePool {
    connections: tokio::sync::Mutex<HashMap<(String, String), Cluster>>,
    store: OnceLock<Arc<ThreadStore>>,
}

impl RemotePool {
    /// The thread index mirrored rollouts go into (set once by the thread manager).
    pub fn set_store(&self, store: Option<Arc<ThreadStore>>) {
        if let Some(store) = store {
            let _ = self.store.set(store);
        }
    }

    pub fn store(&self) -> Option<Arc<ThreadStore>> {
        self.store.get().cloned()
    }

    /// A connection to the pool `config` names: made now if there is none yet (an
    /// unreachable server is an error now, for this spawn only).
    pub async fn connect(&self, config: &ClusterConfig) -> Result<Cluster, ClusterError> {
        let options = ClusterOptions::from_config(config, None)?;
        let key = (options.url.clone(), options.layout.pool().to_string());
        let mut connections = self.connections.lock().await;
        if let Some(cluster) = connections.get(&key) {
            return Ok(cluster.clone());
        }
        let cluster = Cluster::connect(options, "troupe-agents").await?;
        if let Some(warning) = cluster.anonymous_warning() {
            tracing::warn!("{warning}");
        }
        connections.insert(key, cluster.clone());
        Ok(cluster)
    }
}

/// Stands in for a remote agent's session in its parent's tree.
pub struct RemoteSessionActor;

/// What the stand-in needs.
pub struct RemoteArgs {
    pub cluster: Cluster,
    pub thread_id: ThreadId,
    pub task_path: String,
    /// This runtime's `TROUPE_HOME`: the rollout is mirrored under it.
    pub home: PathBuf,
    pub store: Option<Arc<ThreadStore>>,
    /// The first subscriber (the child's watcher), given before any event can arrive.
    pub watcher: mpsc::Sender<Event>,
    /// With a git workspace: the base commit sent, so the branch the worker pushes back
    /// is fetched before the child's answer reaches anyone.
    pub git: Option<BasePushed>,
    /// The thread's keys (its secret went to the worker in the spawn request).
    pub keys: ThreadKeys,
}

type Subscribers = Arc<Mutex<Vec<mpsc::Sender<Event>>>>;

pub struct RemoteState {
    cluster: Cluster,
    thread: String,
    task_path: String,
    keys: ThreadKeys,
    subscribers: Subscribers,
    /// The follower task; aborted with the actor.
    _follower: AbortOnDropHandle<()>,
}

impl Actor for RemoteSessionActor {
    type Msg = SessionMsg;
    type State = RemoteState;
    type Arguments = RemoteArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<SessionMsg>,
        args: RemoteArgs,
    ) -> Result<RemoteState, ActorProcessingErr> {
        let thread = args.thread_id.to_string();
        let follower = ThreadFollower::new(&args.cluster, &thread, args.keys.clone())?;
        let subscribers: Subscribers = Arc::new(Mutex::new(vec![args.watcher]));
        let task = tokio::spawn(follow(
            myself,
            follower,
            Followed {
                thread: thread.clone(),
                subscribers: subscribers.clone(),
                mirror: RolloutMirror::new(&args.home),
                home: args.home,
                store: args.store,
                git: args.git,
            },
        ));
        Ok(RemoteState {
            cluster: args.cluster,
            thread,
            task_path: args.task_path,
            keys: args.keys,
            subscribers,
            _follower: AbortOnDropHandle::new(task),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<SessionMsg>,
        message: SessionMsg,
        state: &mut RemoteState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SessionMsg::Submit(submission) => {
                if let Some(request) = request_for(submission.op) {
                    // Off the handler: the worker may take up to the request timeout.
                    let (cluster, thread, path, keys) = (
                        state.cluster.clone(),
                        state.thread.clone(),
                        state.task_path.clone(),
                        state.keys.clone(),
                    );
                    tokio::spawn(async move {
                        if let Err(err) = thread_request(&cluster, &thread, &keys, &request).await {
                            tracing::warn!(agent = %path, %err, "request to a remote agent failed");
                        }
                    });
                }
            }
            SessionMsg::Subscribe { events } => lock(&state.subscribers).push(events),
            // Its history lives on its worker (a remote agent's own children run there too).
            SessionMsg::GetHistory { reply } => drop(reply),
            SessionMsg::Goal { reply, .. } => {
                let _ = reply.send(Err(format!(
                    "`{}` runs on a worker of the pool; its goal is kept there",
                    state.task_path
                )));
            }
            // Sent by a local session's own turn, recorder and poller only.
            SessionMsg::TurnItem { .. }
            | SessionMsg::TurnEvent { .. }
            | SessionMsg::TurnCheckpoint { .. }
            | SessionMsg::RolloutFailed { .. }
            | SessionMsg::HistoryReplaced { .. }
            | SessionMsg::InputConsumed { .. }
            | SessionMsg::AgentEvent(_)
            | SessionMsg::TurnEnded { .. }
            | SessionMsg::QueuedInput { .. }
            | SessionMsg::UserShellOutput { .. }
            | SessionMsg::UserShellEnded { .. } => {}
        }
        Ok(())
    }
}

/// The request on the thread's ops subject an op sent to the stand-in becomes; none for
/// what a remote thread does not take from here.
pub fn request_for(op: Op) -> Option<ThreadRequest> {
    match op {
        Op::Interrupt => Some(ThreadRequest::Interrupt),
        Op::Shutdown => Some(ThreadRequest::Shutdown),
        Op::AgentInput { items, start_turn } => {
            Some(ThreadRequest::AgentInput { items, start_turn })
        }
        Op::UserInput { items } => Some(ThreadRequest::AgentInput {
            items,
            start_turn: true,
        }),
        // Its root's supervisor decided on one of its approval requests.
        Op::ExecApproval { call_id, decision } => {
            Some(ThreadRequest::Approval { call_id, decision })
        }
        Op::AgentApproval { .. }
        | Op::UserInputAnswer { .. }
        | Op::Compact
        | Op::OverrideTurnContext { .. }
        | Op::UpdateTurnSettings { .. }
        | Op::AgentUserInput { .. }
        | Op::CreateGoal { .. }
        // A user's shell command is typed into a root thread, never a worker's agent.
        | Op::RunUserShellCommand { .. } => None,
    }
}

/// What the follower task owns.
struct Followed {
    thread: String,
    subscribers: Subscribers,
    mirror: RolloutMirror,
    home: PathBuf,
    store: Option<Arc<ThreadStore>>,
    git: Option<BasePushed>,
}

/// Reads the thread's subject until its end (or a failure that ends it), then stops the
/// stand-in. With a git workspace the child's `TurnComplete` waits for the end, which
/// names the branch its work was pushed to: the branch is fetched here and named in the
/// answer, so the parent can merge it as soon as it reads the answer.
async fn follow(myself: ActorRef<SessionMsg>, mut follower: ThreadFollower, mut f: Followed) {
    let mut held: Option<Event> = None;
    let ended = loop {
        let next = follower.next().await;
        for dropped in follower.take_dropped() {
            tracing::warn!(thread = %f.thread, "ignored a message not from the thread's worker: {dropped}");
        }
        let message = match next {
            Ok(message) => message,
            Err(err) => break Err(err.to_string()),
        };
        match message.kind {
            Kind::Event => match serde_json::from_slice::<Event>(&message.payload) {
                // Approval requests included: they reach the root's supervisor through the
                // watcher, and its decision comes back as `Op::ExecApproval`.
                Ok(event) if f.git.is_some() && is_turn_complete(&event) => held = Some(event),
                Ok(event) => tell(&f.subscribers, event).await,
                Err(err) => {
                    break Err(format!(
                        "event {} of remote thread {} is malformed: {err}",
                        message.seq, f.thread
                    ))
                }
            },
            Kind::Rollout => {
                let line = String::from_utf8_lossy(&message.payload);
                if let Err(err) = f.mirror.append(message.rollout_path.as_deref(), &line) {
                    break Err(err.to_string());
                }
            }
            Kind::End => {
                break match serde_json::from_slice::<End>(&message.payload) {
                    Ok(end) => {
                        if let Some(pushed) = f.git.clone() {
                            let text = bring_back_blocking(pushed, end.workspace).await;
                            release(&f.subscribers, held.take(), &text).await;
                        }
                        Ok(())
                    }
                    Err(err) => Err(format!("the remote thread's end is malformed: {err}")),
                }
            }
        }
    };
    if let Err(err) = &ended {
        let text = format!("[worktree] the worker's branch was not brought back: {err}");
        release(&f.subscribers, held.take(), &text).await;
    }
    index(&f).await;
    match ended {
        // As a local session that shut down: the watcher closes the agent.
        Ok(()) => tell(&f.subscribers, event(EventMsg::ShutdownComplete)).await,
        // The watcher ends the agent as failed with this error.
        Err(message) => {
            let error = TurnError::Internal {
                message: format!("remote agent (thread {}): {message}", f.thread),
            };
            tell(
                &f.subscribers,
                event(EventMsg::Error { error, fatal: true }),
            )
            .await;
        }
    }
    lock(&f.subscribers).clear();
    myself.stop(None);
}

fn is_turn_complete(event: &Event) -> bool {
    matches!(event.msg, EventMsg::TurnComplete { .. })
}

/// Fetches the worker's branch into the requester's repository (git runs in a blocking
/// task); the text for the child's answer either way.
async fn bring_back_blocking(pushed: BasePushed, outcome: Option<WorkspaceOutcome>) -> String {
    let done = tokio::task::spawn_blocking(move || bring_back(&pushed, outcome.as_ref())).await;
    match done {
        Ok(Ok(text)) | Ok(Err(text)) => text,
        Err(err) => format!("[worktree] the worker's branch was not fetched: {err}"),
    }
}

/// Hands on a held `TurnComplete` with `text` after the child's answer; without one (the
/// turn did not complete) the text only goes to the log.
async fn release(subscribers: &Subscribers, held: Option<Event>, text: &str) {
    let Some(mut event) = held else {
        tracing::info!("{text}");
        return;
    };
    if let EventMsg::TurnComplete {
        last_agent_message, ..
    } = &mut event.msg
    {
        let answer = last_agent_message
            .take()
            .unwrap_or_else(|| "(the agent ended its turn without a message)".into());
        *last_agent_message = Some(format!("{answer}\n\n{text}"));
    }
    tell(subscribers, event).await;
}

fn event(msg: EventMsg) -> Event {
    Event {
        id: String::new(),
        msg,
    }
}

/// Hands `event` to every subscriber still listening (waiting when one is full: events
/// are never dropped, the stream keeps them meanwhile).
async fn tell(subscribers: &Subscribers, event: Event) {
    let open: Vec<mpsc::Sender<Event>> = lock(subscribers).clone();
    let mut gone = false;
    for subscriber in &open {
        gone |= subscriber.send(event.clone()).await.is_err();
    }
    if gone {
        lock(subscribers).retain(|s| !s.is_closed());
    }
}

/// Puts the mirrored thread in this runtime's index (`troupe list`), once its lines are
/// durable.
async fn index(f: &Followed) {
    let (Some(path), Some(store)) = (f.mirror.path().map(PathBuf::from), f.store.clone()) else {
        return;
    };
    f.mirror.sync();
    let home = f.home.clone();
    let indexed = tokio::task::spawn_blocking(move || {
        let summary = crate::thread_store::reconcile::summarize_file(&home, &path)
            .map_err(|err| err.to_string())?;
        store.put(&summary).map_err(|err| err.to_string())
    })
    .await;
    match indexed {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::warn!(thread = %f.thread, %err, "mirrored rollout not indexed"),
        Err(err) => tracing::warn!(thread = %f.thread, %err, "mirrored rollout not indexed"),
    }
}
