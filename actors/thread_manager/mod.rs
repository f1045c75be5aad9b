//! ThreadManager: the registry of live threads and the owner of shared services (the HTTP
//! client with its connection pool, the tool registry, the thread index, the rollout writer). Spawns one session
//! per thread — new, or resumed from its rollout — and survives any of them failing.

use crate::agents::AgentTree;
use crate::rollout_recorder::loader;
use crate::rollout_recorder::path::rollout_path;
use crate::rollout_recorder::writer::RolloutWriter;
use crate::session::{SessionActor, SessionArgs, SessionStart};
use crate::thread_store::ThreadStore;
use crate::tool_orchestrator::registry::ToolRegistry;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::{SessionMsg, ThreadHandle, ThreadManagerMsg};
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
    registry: Arc<ToolRegistry>,
    http: reqwest::Client,
    store: Option<Arc<ThreadStore>>,
    rollout_writer: RolloutWriter,
    threads: HashMap<ThreadId, ActorRef<SessionMsg>>,
    /// Sub-agents of every thread of this runtime (`agents/`).
    agents: Arc<AgentTree>,
}

impl ThreadManagerState {
    async fn spawn(
        &mut self,
        myself: &ActorRef<ThreadManagerMsg>,
        thread_id: ThreadId,
        settings: SessionSettings,
        path: PathBuf,
        start: SessionStart,
    ) -> Result<ThreadHandle, String> {
        // A broken rules file stops the thread from starting: nothing may run without its
        // rules (new and resumed threads alike).
        let rules = crate::session::load_rules(&settings)
            .await
            .map_err(|err| format!("cannot start the thread: {err}"))?;
        let args = SessionArgs {
            rules,
            thread_id,
            settings,
            rollout_path: path.clone(),
            registry: self.registry.clone(),
            http: self.http.clone(),
            manager: Some(myself.clone()),
            start,
            store: self.store.clone(),
            rollout_writer: self.rollout_writer.clone(),
            agents: Some(self.agents.clone()),
        };
        let (session, _) = Actor::spawn_linked(None, SessionActor, args, myself.get_cell())
            .await
            .map_err(|err| format!("could not start the thread: {err}"))?;
        self.threads.insert(thread_id, session.clone());
        Ok(ThreadHandle {
            thread_id,
            session,
            rollout_path: path,
        })
    }
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
        let mut registry = (*args.registry).clone();
        crate::agents::register_tools(&mut registry, &agents, &myself);
        Ok(ThreadManagerState {
            agents,
            registry: Arc::new(registry),
            http: args.http,
            store: args.store,
            rollout_writer: args.rollout_writer,
            threads: HashMap::new(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ThreadManagerMsg::StartThread { settings, reply } => {
                let thread_id = ThreadId::new();
                let path = rollout_path(&settings.troupe_home, thread_id);
                let result = state
                    .spawn(&myself, thread_id, *settings, path, SessionStart::New)
                    .await;
                let _ = reply.send(result);
            }
            ThreadManagerMsg::ResumeThread {
                settings,
                rollout_path,
                reply,
            } => {
                let result = match loader::load(&rollout_path) {
                    Ok(loaded) if state.threads.contains_key(&loaded.meta.thread_id) => {
                        Err(format!("thread {} is already open", loaded.meta.thread_id))
                    }
                    Ok(loaded) => {
                        let thread_id = loaded.meta.thread_id;
                        let start = SessionStart::Resume(Box::new(loaded));
                        state
                            .spawn(&myself, thread_id, *settings, rollout_path, start)
                            .await
                    }
                    Err(err) => Err(err.to_string()),
                };
                let _ = reply.send(result);
            }
            ThreadManagerMsg::StartAgent {
                settings,
                start,
                reply,
            } => {
                let thread_id = ThreadId::new();
                let path = rollout_path(&settings.troupe_home, thread_id);
                let result = state
                    .spawn(
                        &myself,
                        thread_id,
                        *settings,
                        path,
                        SessionStart::Agent(start),
                    )
                    .await;
                let _ = reply.send(result);
            }
            ThreadManagerMsg::ThreadStopped { thread_id } => {
                state.threads.remove(&thread_id);
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
