//! The runtime as frontends use it: start the actor tree, open threads, submit ops, read events.

use crate::rollout_recorder::writer::{self, RolloutWriter};
use crate::thread_manager::{ThreadManagerActor, ThreadManagerArgs};
use crate::thread_store::ThreadStore;
use crate::tool_orchestrator::registry::ToolRegistry;
use ractor::{Actor, ActorRef};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio::sync::mpsc;
use troupe_messages::events::{Event, EventMsg};
use troupe_messages::mailboxes::{SessionMsg, ThreadHandle, ThreadManagerMsg};
use troupe_messages::ops::{Op, Submission};
use troupe_messages::settings::SessionSettings;

/// Events a subscriber may have queued before the session waits on it.
const SUBSCRIBER_CAPACITY: usize = 4096;
/// Deadline of requests to the thread manager.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// The submission id of the shutdown [`Runtime::shutdown`] sends each thread.
const SHUTDOWN_SUBMISSION: &str = "runtime-shutdown";

#[derive(Debug, Error)]
pub enum RuntimeError {
    #[error("could not start the runtime: {0}")]
    Start(String),
    #[error("the thread manager did not answer: {0}")]
    Manager(String),
    #[error("{0}")]
    Thread(String),
    #[error("the thread has stopped")]
    ThreadGone,
}

/// A running actor tree (a clone is another handle on the same tree).
#[derive(Clone)]
pub struct Runtime {
    manager: ActorRef<ThreadManagerMsg>,
}

impl Runtime {
    /// Starts the thread manager with these tools and no thread index.
    pub async fn start(registry: ToolRegistry) -> Result<Self, RuntimeError> {
        Self::start_with_store(registry, None).await
    }

    /// Starts the thread manager with these tools; sessions keep `store` up to date.
    pub async fn start_with_store(
        registry: ToolRegistry,
        store: Option<Arc<ThreadStore>>,
    ) -> Result<Self, RuntimeError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("troupe/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| RuntimeError::Start(err.to_string()))?;
        // Orphans of commands (a `setsid` daemon) come back to this process rather than init,
        // so the end of their turn (and the frontend's exit) can kill them. Best effort: a
        // kernel without it still gets process groups killed.
        if let Err(err) = troupe_sandbox::descendants::become_subreaper() {
            tracing::warn!(%err, "cannot become a child subreaper; daemons of commands may outlive their turn");
        }
        // One writer pool for every thread of this runtime: an idle thread costs no OS thread.
        let rollout_writer = RolloutWriter::new(writer::DEFAULT_MAX_WORKERS);
        let (manager, _) = Actor::spawn(
            None,
            ThreadManagerActor,
            ThreadManagerArgs {
                registry: Arc::new(registry),
                http,
                store,
                rollout_writer,
            },
        )
        .await
        .map_err(|err| RuntimeError::Start(err.to_string()))?;
        Ok(Self { manager })
    }

    /// Opens a new thread and subscribes to its events.
    pub async fn start_thread(
        &self,
        settings: SessionSettings,
    ) -> Result<ThreadClient, RuntimeError> {
        self.open(|reply| ThreadManagerMsg::StartThread {
            settings: Box::new(settings),
            reply,
        })
        .await
    }

    /// Opens a new thread as a sub-agent of a thread elsewhere (a remote sub-agent on a
    /// worker): its rollout records its parent and place in the tree.
    pub async fn start_agent_thread(
        &self,
        settings: SessionSettings,
        start: troupe_messages::mailboxes::AgentStart,
    ) -> Result<ThreadClient, RuntimeError> {
        self.open(|reply| ThreadManagerMsg::StartAgent {
            settings: Box::new(settings),
            start: Box::new(start),
            reply,
        })
        .await
    }

    /// Reopens the thread recorded in `rollout_path` and subscribes to its events.
    pub async fn resume_thread(
        &self,
        settings: SessionSettings,
        rollout_path: PathBuf,
    ) -> Result<ThreadClient, RuntimeError> {
        self.open(|reply| ThreadManagerMsg::ResumeThread {
            settings: Box::new(settings),
            rollout_path,
            reply,
        })
        .await
    }

    async fn open(
        &self,
        msg: impl FnOnce(ractor::RpcReplyPort<Result<ThreadHandle, String>>) -> ThreadManagerMsg,
    ) -> Result<ThreadClient, RuntimeError> {
        let handle = crate::ask::ask(&self.manager, msg, CALL_TIMEOUT)
            .await
            .map_err(|err| RuntimeError::Manager(err.to_string()))?
            .map_err(RuntimeError::Thread)?;
        let (tx, rx) = mpsc::channel(SUBSCRIBER_CAPACITY);
        handle
            .session
            .send_message(SessionMsg::Subscribe { events: tx })
            .map_err(|_| RuntimeError::ThreadGone)?;
        Ok(ThreadClient {
            handle,
            events: rx,
            submitted: 0,
        })
    }

    /// A thread that is already open in this runtime (a sub-agent, whose session its
    /// parent's holds), to watch; `None` when it is not open.
    pub async fn open_thread(
        &self,
        thread_id: troupe_messages::ids::ThreadId,
    ) -> Result<Option<OpenThread>, RuntimeError> {
        let session = crate::ask::ask(
            &self.manager,
            |reply| ThreadManagerMsg::LoadedSession(thread_id, reply),
            CALL_TIMEOUT,
        )
        .await
        .map_err(|err| RuntimeError::Manager(err.to_string()))?;
        Ok(session.map(|session| OpenThread { thread_id, session }))
    }

    /// Stops the whole tree at once: a running turn is cut off without an end record (see
    /// [`Runtime::shutdown`] for the orderly way).
    pub fn stop(&self) {
        self.manager.stop(None);
    }

    /// The orderly end of every frontend (a signal, a closed client): each open thread gets
    /// `Op::Shutdown`, which interrupts its running turn and records the turn's end
    /// (`turn_aborted`), flushes its rollout and releases its lock; then the tree stops.
    /// Waits up to `grace` for the threads; a second call finds nothing left to do.
    pub async fn shutdown(&self, grace: Duration) {
        let sessions = crate::ask::ask(
            &self.manager,
            ThreadManagerMsg::LoadedSessions,
            CALL_TIMEOUT.min(grace),
        )
        .await
        .unwrap_or_default();
        for session in &sessions {
            let _ = session.send_message(SessionMsg::Submit(Submission {
                id: SHUTDOWN_SUBMISSION.into(),
                op: Op::Shutdown,
            }));
        }
        // A session is stopped once its recorder is: the lock is gone when this returns.
        let cells: Vec<ractor::ActorCell> =
            sessions.iter().map(ractor::ActorRef::get_cell).collect();
        futures::future::join_all(cells.iter().map(|cell| cell.wait(Some(grace)))).await;
        let _ = self
            .manager
            .stop_and_wait(Some("shutdown".into()), Some(grace))
            .await;
    }
}

/// A thread open in this runtime, not yet watched.
pub struct OpenThread {
    thread_id: troupe_messages::ids::ThreadId,
    session: ActorRef<SessionMsg>,
}

impl OpenThread {
    /// A client of the thread's session, with its events from now on. The session stays its
    /// owner's: dropping the client leaves the thread running.
    pub async fn subscribe(self) -> Result<ThreadClient, RuntimeError> {
        let (tx, mut rx) = mpsc::channel(SUBSCRIBER_CAPACITY);
        self.session
            .send_message(SessionMsg::Subscribe { events: tx })
            .map_err(|_| RuntimeError::ThreadGone)?;
        // A new subscriber's first event names the thread's rollout.
        let rollout_path = match tokio::time::timeout(CALL_TIMEOUT, rx.recv()).await {
            Ok(Some(Event {
                msg: EventMsg::SessionConfigured { rollout_path, .. },
                ..
            })) => rollout_path,
            Ok(_) => return Err(RuntimeError::ThreadGone),
            Err(_) => {
                return Err(RuntimeError::Manager(
                    "the thread's session did not answer".into(),
                ))
            }
        };
        Ok(ThreadClient {
            handle: ThreadHandle {
                thread_id: self.thread_id,
                session: self.session,
                rollout_path,
            },
            events: rx,
            submitted: 0,
        })
    }
}

/// A client's view of one thread: submit ops, receive events.
pub struct ThreadClient {
    pub handle: ThreadHandle,
    events: mpsc::Receiver<Event>,
    submitted: u64,
}

impl ThreadClient {
    /// Submits an op; returns the submission id its events will carry.
    pub fn submit(&mut self, op: Op) -> Result<String, RuntimeError> {
        self.submitted += 1;
        let id = format!("sub-{}", self.submitted);
        self.handle
            .session
            .send_message(SessionMsg::Submit(Submission { id: id.clone(), op }))
            .map_err(|_| RuntimeError::ThreadGone)?;
        Ok(id)
    }

    /// The next event; `None` once the thread has stopped.
    pub async fn next_event(&mut self) -> Option<Event> {
        self.events.recv().await
    }
}
