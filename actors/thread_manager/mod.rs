//! ThreadManager: the registry of live threads and the owner of shared services (the HTTP
//! client with its connection pool, the tool registry). Spawns one session per thread and
//! survives any of them failing.

use crate::rollout_recorder::path::rollout_path;
use crate::session::{SessionActor, SessionArgs};
use crate::tool_orchestrator::registry::ToolRegistry;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use std::collections::HashMap;
use std::sync::Arc;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::{SessionMsg, ThreadHandle, ThreadManagerMsg};

/// Actor of the thread registry.
pub struct ThreadManagerActor;

/// Startup arguments.
pub struct ThreadManagerArgs {
    pub registry: Arc<ToolRegistry>,
    pub http: reqwest::Client,
}

pub struct ThreadManagerState {
    registry: Arc<ToolRegistry>,
    http: reqwest::Client,
    threads: HashMap<ThreadId, ActorRef<SessionMsg>>,
}

impl Actor for ThreadManagerActor {
    type Msg = ThreadManagerMsg;
    type State = ThreadManagerState;
    type Arguments = ThreadManagerArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: ThreadManagerArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ThreadManagerState {
            registry: args.registry,
            http: args.http,
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
                // A broken rules file stops the thread from starting: nothing may run
                // without its rules.
                let rules = match crate::session::load_rules(&settings) {
                    Ok(rules) => rules,
                    Err(err) => {
                        let _ = reply.send(Err(format!("cannot start the thread: {err}")));
                        return Ok(());
                    }
                };
                let thread_id = ThreadId::new();
                let path = rollout_path(&settings.troupe_home, thread_id);
                let args = SessionArgs {
                    thread_id,
                    settings: *settings,
                    rollout_path: path.clone(),
                    registry: state.registry.clone(),
                    http: state.http.clone(),
                    manager: Some(myself.clone()),
                    rules,
                };
                let result = Actor::spawn_linked(None, SessionActor, args, myself.get_cell())
                    .await
                    .map(|(session, _)| {
                        state.threads.insert(thread_id, session.clone());
                        ThreadHandle {
                            thread_id,
                            session,
                            rollout_path: path,
                        }
                    })
                    .map_err(|err| format!("could not start the thread: {err}"));
                let _ = reply.send(result);
            }
            ThreadManagerMsg::ListThreads { reply } => {
                let _ = reply.send(state.threads.keys().copied().collect());
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
