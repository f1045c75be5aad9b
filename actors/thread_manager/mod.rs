//! ThreadManager: the registry of live threads and the owner of shared services (the HTTP
//! client with its connection pool, the tool registry, the thread index, the rollout writer). Spawns one session
//! per thread — new, or resumed from its rollout — and survives any of them failing.
//!
//! Its handler never waits on a thread's start: loading a rollout, evaluating rules files and
//! the session's own start run in an opener task per request, which claims the thread id
//! (`ClaimThread`), then reports the started session (`ThreadOpened`).

use crate::agents::AgentTree;
use crate::rollout_recorder::loader;
use crate::rollout_recorder::path::rollout_path;
use crate::rollout_recorder::writer::RolloutWriter;
use crate::session::{SessionActor, SessionArgs, SessionStart};
use crate::thread_store::ThreadStore;
use crate::tool_orchestrator::registry::ToolRegistry;
use ractor::{call_t, Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::{AgentStart, SessionMsg, ThreadHandle, ThreadManagerMsg};
use troupe_messages::settings::SessionSettings;

/// Actor of the thread registry.
pub struct ThreadManagerActor;

/// Startup arguments.
pub struct ThreadManagerArgs {
    pub registry: Arc<ToolRegistry>,
    pub http: reqwest::Client,
    /// The thread index; `None` runs without one (rollouts are still written).
    pub store: Option<Arc<ThreadStore>>,
    /// The writer pool every session's recorder writes its rollout through.
    pub rollout_writer: RolloutWriter,
}

pub struct ThreadManagerState {
    /// What an opener task needs to start a session (cloned into each).
    services: SessionServices,
    threads: HashMap<ThreadId, ActorRef<SessionMsg>>,
    /// Threads claimed by an opener task whose session is not started yet.
    opening: HashSet<ThreadId>,
}

/// The shared services every session gets.
#[derive(Clone)]
struct SessionServices {
    registry: Arc<ToolRegistry>,
    http: reqwest::Client,
    store: Option<Arc<ThreadStore>>,
    rollout_writer: RolloutWriter,
    /// Sub-agents of every thread of this runtime (`agents/`).
    agents: Arc<AgentTree>,
}

/// Deadline of an opener task's claim (the manager answers at once unless it is stopping).
const CLAIM_TIMEOUT_MS: u64 = 30_000;

/// Where new rollouts go: `$TROUPE_HOME`, or the ephemeral run's temporary directory.
fn rollout_base(settings: &SessionSettings) -> &std::path::Path {
    settings
        .rollout_dir
        .as_deref()
        .unwrap_or(&settings.troupe_home)
}

/// Opens a thread off the manager's handler: loads its rules (and, for a resume, its
/// rollout, after claiming its id), starts its session, reports to the manager, answers the
/// caller. A slow resume thus delays no other thread start.
async fn open_thread(
    manager: ActorRef<ThreadManagerMsg>,
    services: SessionServices,
    settings: SessionSettings,
    opening: Opening,
) -> Result<ThreadHandle, String> {
    let mut resumed_root = false;
    let (thread_id, path, start) = match opening {
        Opening::New { thread_id } => {
            let path = rollout_path(rollout_base(&settings), thread_id);
            (thread_id, path, SessionStart::New)
        }
        Opening::Agent { thread_id, start } => {
            let path = rollout_path(rollout_base(&settings), thread_id);
            (thread_id, path, SessionStart::Agent(start))
        }
        Opening::Resume { rollout_path } => {
            let load_path = rollout_path.clone();
            let loaded = tokio::task::spawn_blocking(move || loader::load(&load_path))
                .await
                .map_err(|err| format!("the rollout loader stopped: {err}"))?
                .map_err(|err| err.to_string())?;
            let thread_id = loaded.meta.thread_id;
            let claimed = call_t!(
                manager,
                ThreadManagerMsg::ClaimThread,
                CLAIM_TIMEOUT_MS,
                thread_id
            )
            .map_err(|err| format!("the thread manager did not answer: {err}"))?;
            if !claimed {
                return Err(format!("thread {thread_id} is already open"));
            }
            resumed_root = loaded.meta.agent.is_none();
            (
                thread_id,
                rollout_path,
                SessionStart::Resume(Box::new(loaded)),
            )
        }
    };
    let (agents, store, home) = (
        services.agents.clone(),
        services.store.clone(),
        rollout_base(&settings).to_path_buf(),
    );
    let started = start_session(&manager, services, thread_id, settings, path.clone(), start).await;
    let session = started.as_ref().ok().cloned();
    if let (true, Some(session)) = (resumed_root, &session) {
        // Its agents died with its old process: re-attached (on disk, not running) before
        // the caller can submit anything, so the first tool call already sees them.
        use crate::agents::reattach::{reattach_from_disk, reattach_from_index};
        match store {
            Some(store) => reattach_from_index(&agents, store, home, thread_id, session).await,
            None => reattach_from_disk(&agents, home, thread_id, session).await,
        }
    }
    let _ = manager.send_message(ThreadManagerMsg::ThreadOpened { thread_id, session });
    Ok(ThreadHandle {
        thread_id,
        session: started?,
        rollout_path: path,
    })
}

/// What an opener task opens.
enum Opening {
    /// A new thread under this (already claimed) id.
    New { thread_id: ThreadId },
    /// The thread recorded in this rollout.
    Resume { rollout_path: PathBuf },
    /// A sub-agent under this (already claimed) id, its rollout linked to its parent.
    Agent {
        thread_id: ThreadId,
        start: Box<AgentStart>,
    },
}

async fn start_session(
    manager: &ActorRef<ThreadManagerMsg>,
    services: SessionServices,
    thread_id: ThreadId,
    settings: SessionSettings,
    path: PathBuf,
    start: SessionStart,
) -> Result<ActorRef<SessionMsg>, String> {
    // A broken rules file stops the thread from starting: nothing may run without its
    // rules (new and resumed threads alike).
    let rules = crate::session::load_rules(&settings)
        .await
        .map_err(|err| format!("cannot start the thread: {err}"))?;
    let args = SessionArgs {
        rules,
        thread_id,
        settings,
        rollout_path: path,
        registry: services.registry,
        http: services.http,
        manager: Some(manager.clone()),
        start,
        store: services.store,
        rollout_writer: services.rollout_writer,
        agents: Some(services.agents),
    };
    let (session, _) = Actor::spawn_linked(None, SessionActor, args, manager.get_cell())
        .await
        .map_err(|err| {
            format!(
                "could not start the thread: {}",
                crate::spawn_failure::cause(&err)
            )
        })?;
    Ok(session)
}

impl Actor for ThreadManagerActor {
    type Msg = ThreadManagerMsg;
    type State = ThreadManagerState;
    type Arguments = ThreadManagerArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: ThreadManagerArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        // The collaboration tools are bound to this runtime's agent tree and to us.
        let agents = Arc::new(AgentTree::default());
        agents.remote.set_store(args.store.clone());
        let mut registry = (*args.registry).clone();
        for handler in crate::agents::collab_tools(&agents, &myself) {
            registry.register(handler);
        }
        // A frontend's editor also holds the files of the sub-agents working in them.
        if let Some(inner) = registry.editor_files().cloned() {
            let tree = agents.clone();
            registry = registry.with_editor_files(Arc::new(
                crate::agents::editor_files::TreeEditorFiles { inner, tree },
            ));
        }
        Ok(ThreadManagerState {
            services: SessionServices {
                registry: Arc::new(registry),
                http: args.http,
                store: args.store,
                rollout_writer: args.rollout_writer,
                agents,
            },
            threads: HashMap::new(),
            opening: HashSet::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Opening happens in a task: the handler only keeps the registry.
        let spawn_opener = |opening: Opening, settings: SessionSettings, reply: RpcReplyPort<_>| {
            let (manager, services) = (myself.clone(), state.services.clone());
            tokio::spawn(async move {
                let _ = reply.send(open_thread(manager, services, settings, opening).await);
            });
        };
        match message {
            ThreadManagerMsg::StartThread { settings, reply } => {
                let thread_id = ThreadId::new();
                state.opening.insert(thread_id);
                spawn_opener(Opening::New { thread_id }, *settings, reply);
            }
            ThreadManagerMsg::ResumeThread {
                settings,
                rollout_path,
                reply,
            } => spawn_opener(Opening::Resume { rollout_path }, *settings, reply),
            ThreadManagerMsg::ClaimThread(thread_id, reply) => {
                let free =
                    !state.threads.contains_key(&thread_id) && !state.opening.contains(&thread_id);
                if free {
                    state.opening.insert(thread_id);
                }
                let _ = reply.send(free);
            }
            ThreadManagerMsg::ThreadOpened { thread_id, session } => {
                state.opening.remove(&thread_id);
                if let Some(session) = session {
                    state.threads.insert(thread_id, session);
                }
            }
            ThreadManagerMsg::StartAgent {
                settings,
                start,
                reply,
            } => {
                let thread_id = ThreadId::new();
                state.opening.insert(thread_id);
                spawn_opener(Opening::Agent { thread_id, start }, *settings, reply);
            }
            ThreadManagerMsg::ThreadStopped { thread_id } => {
                state.threads.remove(&thread_id);
            }
            ThreadManagerMsg::LoadedSession(thread_id, reply) => {
                let _ = reply.send(state.threads.get(&thread_id).cloned());
            }
            ThreadManagerMsg::LoadedSessions(reply) => {
                let _ = reply.send(state.threads.values().cloned().collect());
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorFailed(who, reason) => {
                tracing::error!(%reason, "a session failed; its thread is closed");
                state.threads.retain(|_, s| s.get_id() != who.get_id());
            }
            SupervisionEvent::ActorTerminated(who, ..) => {
                state.threads.retain(|_, s| s.get_id() != who.get_id());
            }
            SupervisionEvent::ActorStarted(_) | SupervisionEvent::ProcessGroupChanged(_) => {}
        }
        Ok(())
    }
}
