//! The app-server's shared state: the runtime, the loaded threads and their pumps, the thread
//! index. Connections come and go; the hub and its threads stay.

use crate::held::{HeldThread, Link};
use crate::live::{Approvals, Control, Pump};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use thiserror::Error;
use tokio::sync::mpsc;
use troupe_actors::runtime::Runtime;
use troupe_actors::thread_store::{ops, ThreadStore};
use troupe_app_server_protocol::protocol::{
    SandboxPolicy, SessionSource, SubAgentSource, Thread, ThreadStatus,
};
use troupe_app_server_protocol::rollout_turns::turns_from_rollout;
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::SessionSettings;
use troupe_messages::threads::ThreadSummary;

/// Codex's `ThreadHistoryMode` for threads whose turns come whole (no paginated listing).
const HISTORY_MODE: &str = "legacy";

/// How long a closing server waits for its threads to record their turns' ends.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, Error)]
pub enum HubError {
    #[error("{0}")]
    Request(String),
}

fn request(err: impl ToString) -> HubError {
    HubError::Request(err.to_string())
}

/// A loaded thread: its pump's mailbox and what its responses need.
pub struct LiveThread {
    pub control: mpsc::UnboundedSender<Control>,
    /// Shared with the pump, which applies `turn/start`'s overrides.
    settings: Arc<Mutex<ThreadSettings>>,
    pub rollout_path: PathBuf,
    pub forked_from: Option<String>,
    /// Becomes true once the pump has ended and the session has stopped.
    pub stopped: tokio::sync::watch::Receiver<bool>,
    /// The process that holds the thread when this server only follows it (`held`).
    pub held_by: Option<u32>,
}

impl LiveThread {
    /// The thread's settings now (after any `turn/start` overrides).
    pub fn settings(&self) -> SessionSettings {
        self.current().resolved
    }

    /// What its clients asked for, and what that resolved to.
    pub fn current(&self) -> ThreadSettings {
        match self.settings.lock() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// A thread's settings as its clients asked for them (`thread/start`, then each `turn/start`'s
/// overrides on top) and as the configuration resolved that request.
#[derive(Debug, Clone)]
pub struct ThreadSettings {
    pub ask: SettingsRequest,
    pub resolved: SessionSettings,
}

/// Thread settings a client asked for.
#[derive(Debug, Default, Clone)]
pub struct SettingsRequest {
    pub cwd: Option<PathBuf>,
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub approval_policy: Option<AskForApproval>,
    pub sandbox_mode: Option<SandboxMode>,
    /// Extra `key=value` (TOML) settings.
    pub raw: Vec<String>,
}

pub struct Hub {
    runtime: Runtime,
    pub home: PathBuf,
    /// The server's own `-c key=value` overrides, under every thread's.
    overrides: Vec<String>,
    store: Option<Arc<ThreadStore>>,
    threads: Arc<Mutex<HashMap<String, Arc<LiveThread>>>>,
    /// Loads one thread at a time, so two clients resuming the same thread get one pump.
    loading: tokio::sync::Mutex<()>,
    pub approvals: Arc<Approvals>,
    names: Mutex<HashMap<String, String>>,
    /// Threads idle longer than this are unloaded (and reloaded on their next use).
    idle_unload: Option<std::time::Duration>,
    /// Unloaded threads' subscribers, and when their session is gone.
    dormant: Arc<Mutex<HashMap<String, Dormant>>>,
    myself: std::sync::Weak<Hub>,
}

/// A thread ready for its pump: where it is, and what the pump knows of it first.
struct Opened {
    thread_id: String,
    rollout_path: PathBuf,
    link: Link,
    primer: Primer,
}

/// What a new pump is primed with.
enum Primer {
    /// Nothing: the session it subscribed to tells it everything from its start.
    Fresh,
    /// A session of this runtime another owns (a running sub-agent): its rollout so far.
    Attached(Vec<troupe_messages::rollout::RolloutLine>),
    /// A thread another process holds: its rollout so far, replayed as a live client saw it.
    Following(Vec<troupe_messages::rollout::RolloutLine>),
}

/// A thread unloaded while idle: who listens to it, and whether its session has stopped.
struct Dormant {
    subscribers: Vec<crate::live::ClientSink>,
    stopped: tokio::sync::watch::Receiver<bool>,
}

impl Hub {
    pub fn new(
        runtime: Runtime,
        home: PathBuf,
        overrides: Vec<String>,
        store: Option<Arc<ThreadStore>>,
        idle_unload: Option<std::time::Duration>,
    ) -> Arc<Self> {
        let names = load_names(&home);
        Arc::new_cyclic(|myself| Self {
            idle_unload,
            dormant: Arc::new(Mutex::new(HashMap::new())),
            myself: myself.clone(),
            runtime,
            home,
            overrides,
            store,
            threads: Arc::new(Mutex::new(HashMap::new())),
            loading: tokio::sync::Mutex::new(()),
            approvals: Arc::new(Approvals::default()),
            names: Mutex::new(names),
        })
    }

    /// Resolves settings for a thread the way `troupe exec` does, plus the client's choices.
    pub fn settings(&self, ask: &SettingsRequest) -> Result<SessionSettings, HubError> {
        let mut raw = self.overrides.clone();
        if let Some(provider) = &ask.model_provider {
            raw.push(format!("model_provider={}", toml_string(provider)));
        }
        raw.extend(ask.raw.iter().cloned());
        let cwd = match &ask.cwd {
            Some(dir) => {
                let dir = std::fs::canonicalize(dir)
                    .map_err(|err| request(format!("cwd {}: {err}", dir.display())))?;
                if !dir.is_dir() {
                    return Err(request(format!("cwd {}: not a directory", dir.display())));
                }
                dir
            }
            None => std::env::current_dir().map_err(request)?,
        };
        let loaded = load_config(
            &self.home,
            &CliOverrides {
                raw,
                model: ask.model.clone(),
                sandbox_mode: ask.sandbox_mode,
                approval_policy: ask.approval_policy,
                cwd: Some(cwd),
                profile: None,
                ..CliOverrides::default()
            },
        )
        .map_err(request)?;
        for warning in &loaded.warnings {
            tracing::warn!("{warning}");
        }
        Ok(loaded.settings)
    }

    /// Starts a thread; its pump runs until the thread stops.
    pub async fn start_thread(
        &self,
        settings: ThreadSettings,
    ) -> Result<(String, Arc<LiveThread>), HubError> {
        let client = self
            .runtime
            .start_thread(settings.resolved.clone())
            .await
            .map_err(request)?;
        let thread_id = client.handle.thread_id.to_string();
        let rollout_path = client.handle.rollout_path.clone();
        let opened = Opened {
            thread_id,
            rollout_path,
            link: Link::Local(client),
            primer: Primer::Fresh,
        };
        Ok(self.adopt_pump(opened, settings, None))
    }

    /// Starts the pump of an opened thread and files it in the hub.
    fn adopt_pump(
        &self,
        opened: Opened,
        settings: ThreadSettings,
        forked_from: Option<String>,
    ) -> (String, Arc<LiveThread>) {
        let Opened {
            thread_id,
            rollout_path,
            link,
            primer,
        } = opened;
        let window = troupe_actors::turn::tokens::context_window(&settings.resolved);
        let settings = Arc::new(Mutex::new(settings));
        let held_by = link.held_by();
        let (control, inbox) = mpsc::unbounded_channel();
        let (stopped_tx, stopped) = tokio::sync::watch::channel(false);
        let live = Arc::new(LiveThread {
            control,
            settings: settings.clone(),
            rollout_path,
            forked_from,
            stopped,
            held_by,
        });
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(thread_id.clone(), live.clone());
        }
        let pump = Pump::new(thread_id.clone(), link, self.approvals.clone())
            .with_context_window(window)
            .with_settings(settings);
        let pump = match primer {
            Primer::Fresh => pump,
            Primer::Attached(lines) => pump.attached(&lines),
            Primer::Following(lines) => pump.following(&lines),
        };
        let threads = Arc::downgrade(&self.threads);
        let dormant = Arc::downgrade(&self.dormant);
        let hub = self.myself.clone();
        let id = thread_id.clone();
        let me = Arc::downgrade(&live);
        let stopped_rx = live.stopped.clone();
        let idle_unload = self.idle_unload;
        tokio::spawn(async move {
            // Idle for long enough: out of the map (new requests reload it), listeners kept.
            let unlink = |subscribers: &[crate::live::ClientSink]| {
                let (Some(threads), Some(dormant)) = (threads.upgrade(), dormant.upgrade()) else {
                    return false;
                };
                let Ok(mut threads) = threads.lock() else {
                    return false;
                };
                let ours = threads
                    .get(&id)
                    .is_some_and(|t| std::ptr::eq(Arc::as_ptr(t), me.as_ptr()));
                if !ours {
                    return false;
                }
                threads.remove(&id);
                if let Ok(mut dormant) = dormant.lock() {
                    dormant.insert(
                        id.clone(),
                        Dormant {
                            subscribers: subscribers.to_vec(),
                            stopped: stopped_rx.clone(),
                        },
                    );
                }
                true
            };
            let handover = pump.run(inbox, idle_unload, unlink).await;
            let _ = stopped_tx.send(true);
            if let Some(hub) = hub.upgrade() {
                hub.after_pump(&id, handover).await;
            }
        });
        (thread_id, live)
    }

    /// A loaded thread, without loading it.
    pub fn loaded(&self, thread_id: &str) -> Option<Arc<LiveThread>> {
        self.threads.lock().ok()?.get(thread_id).cloned()
    }

    /// The ids of the threads loaded now.
    pub fn loaded_ids(&self) -> Vec<String> {
        self.threads
            .lock()
            .map(|threads| {
                threads
                    .iter()
                    .filter(|(_, live)| !live.control.is_closed())
                    .map(|(id, _)| id.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A thread by id, loaded from its rollout if it is not live. Archived threads are refused.
    pub async fn thread(&self, thread_id: &str) -> Result<Arc<LiveThread>, HubError> {
        check_thread_id(thread_id)?;
        if let Some(live) = self.loaded(thread_id) {
            if !live.control.is_closed() {
                return Ok(live);
            }
        }
        let _loading = self.loading.lock().await;
        if let Some(live) = self.loaded(thread_id) {
            if !live.control.is_closed() {
                return Ok(live);
            }
        }
        let summary = self.summary(thread_id)?;
        if summary.archived {
            return Err(request(format!(
                "thread {thread_id} is archived; unarchive it first"
            )));
        }
        let ask = SettingsRequest {
            cwd: Some(PathBuf::from(&summary.cwd)),
            ..Default::default()
        };
        let settings = ThreadSettings {
            resolved: self.settings(&ask)?,
            ask,
        };
        let dormant = self
            .dormant
            .lock()
            .ok()
            .and_then(|mut d| d.remove(thread_id));
        if let Some(dormant) = &dormant {
            // The unloaded session must have let go of its rollout first.
            let mut stopped = dormant.stopped.clone();
            let wait = stopped.wait_for(|stopped| *stopped);
            let _ = tokio::time::timeout(std::time::Duration::from_secs(15), wait).await;
        }
        let thread_id = summary.id.to_string();
        let rollout_path = summary.rollout_path.clone();
        // Open in this runtime already (a sub-agent its parent's session holds): watched.
        // Held by another live process: followed. Otherwise (a dead holder's lock is taken
        // over): resumed here.
        let (link, primer) = match self.attach_open(&summary).await? {
            Some((client, lines)) => (Link::Local(client), Primer::Attached(lines)),
            None => match crate::held::holder(&summary.rollout_path) {
                Some(pid) => {
                    let (held, lines) =
                        HeldThread::follow(&self.home, summary.id, &summary.rollout_path, pid)
                            .await
                            .map_err(request)?;
                    (Link::Held(held), Primer::Following(lines))
                }
                None => {
                    let client = self
                        .runtime
                        .resume_thread(
                            settings.resolved.clone(),
                            PathBuf::from(&summary.rollout_path),
                        )
                        .await
                        .map_err(request)?;
                    (Link::Local(client), Primer::Fresh)
                }
            },
        };
        let opened = Opened {
            thread_id,
            rollout_path,
            link,
            primer,
        };
        let live = self
            .adopt_pump(opened, settings, summary.parent.map(|id| id.to_string()))
            .1;
        for client in dormant.map(|d| d.subscribers).unwrap_or_default() {
            let _ = live.control.send(Control::Subscribe {
                client,
                response: None,
                after: Vec::new(),
            });
        }
        Ok(live)
    }

    /// After a pump ended: forget the thread, and carry requests that came in while it was
    /// being unloaded over to the reloaded thread.
    async fn after_pump(&self, thread_id: &str, handover: crate::live::Handover) {
        if let Ok(mut threads) = self.threads.lock() {
            if threads
                .get(thread_id)
                .is_some_and(|t| t.control.is_closed())
            {
                threads.remove(thread_id);
            }
        }
        if handover.leftover.is_empty() {
            return;
        }
        match self.thread(thread_id).await {
            Ok(live) => {
                for request in handover.leftover {
                    if let Err(unsent) = live.control.send(request) {
                        unsent.0.fail("the thread stopped");
                    }
                }
            }
            Err(err) => {
                for request in handover.leftover {
                    request.fail(&err.to_string());
                }
            }
        }
    }

    /// The index's summary of a thread (loaded or not).
    pub fn summary(&self, thread_id: &str) -> Result<ThreadSummary, HubError> {
        check_thread_id(thread_id)?;
        ops::find(&self.home, self.store.as_deref(), thread_id).map_err(|err| match err {
            ops::OpsError::Unknown(_) => request(format!("thread not found: {thread_id}")),
            other => request(other),
        })
    }

    pub fn store(&self) -> Option<&ThreadStore> {
        self.store.as_deref()
    }

    /// Every thread on disk (and live), newest first.
    pub fn all_summaries(&self) -> Vec<ThreadSummary> {
        let mut all = match self.store.as_deref().map(ThreadStore::all) {
            Some(Ok(all)) => all,
            _ => troupe_actors::thread_store::reconcile::scan(&self.home).0,
        };
        troupe_actors::thread_store::reconcile::sort_newest_first(&mut all);
        all
    }

    /// The wire thread for a summary, with its turns when asked.
    pub async fn wire_thread(&self, summary: &ThreadSummary, include_turns: bool) -> Thread {
        let turns = if include_turns {
            read_turns(&summary.id.to_string(), &summary.rollout_path).await
        } else {
            Vec::new()
        };
        let loaded = self
            .loaded(&summary.id.to_string())
            .filter(|l| !l.control.is_closed());
        let status = match &loaded {
            Some(live) => snapshot_status(live).await,
            None => ThreadStatus::NotLoaded,
        };
        let created_at =
            troupe_app_server_protocol::jsonrpc::parse_time_ms(&summary.created_at) / 1000;
        let cwd = summary.cwd.display().to_string();
        let updated_at = summary.updated_at_ms / 1000;
        Thread {
            id: summary.id.to_string(),
            session_id: summary.id.to_string(),
            path: Some(summary.rollout_path.display().to_string()),
            cwd,
            status,
            turns,
            model_provider: loaded
                .as_ref()
                .map(|l| l.settings().provider.id)
                .unwrap_or_else(|| summary.model_provider.clone()),
            model: loaded.as_ref().map(|l| l.settings().model),
            reasoning_effort: loaded
                .as_ref()
                .and_then(|l| l.settings().context.reasoning_effort),
            source: source_of(summary),
            cli_version: env!("CARGO_PKG_VERSION").into(),
            ephemeral: false,
            preview: summary.title.clone(),
            name: self.name(&summary.id.to_string()),
            project_id: None,
            // A sub-agent (it has a task path) links to the thread that spawned it; any other
            // thread with a parent was forked from it.
            forked_from_id: summary
                .parent
                .filter(|_| summary.task_path.is_none())
                .map(|id| id.to_string()),
            parent_thread_id: summary
                .parent
                .filter(|_| summary.task_path.is_some())
                .map(|id| id.to_string()),
            agent_nickname: summary.nickname.clone(),
            agent_role: None,
            created_at,
            updated_at,
            recency_at: Some(updated_at),
            git_info: crate::thread_fields::git_info(&summary.rollout_path).await,
            history_mode: HISTORY_MODE.into(),
            originator: None,
            thread_source: None,
        }
    }

    /// The wire thread of a live thread that may not be indexed yet (just started).
    pub async fn live_wire_thread(&self, thread_id: &str, live: &LiveThread) -> Thread {
        let settings = live.settings();
        let now = troupe_app_server_protocol::jsonrpc::now_ms() / 1000;
        let cwd = settings.cwd.display().to_string();
        Thread {
            reasoning_effort: settings.context.reasoning_effort.clone(),
            agent_role: None,
            recency_at: Some(now),
            git_info: crate::thread_fields::git_info(&live.rollout_path).await,
            history_mode: HISTORY_MODE.into(),
            originator: None,
            thread_source: None,
            id: thread_id.to_string(),
            session_id: thread_id.to_string(),
            path: Some(live.rollout_path.display().to_string()),
            cwd,
            status: ThreadStatus::Idle,
            turns: Vec::new(),
            model_provider: settings.provider.id.clone(),
            model: Some(settings.model.clone()),
            source: SessionSource::Named("appServer".into()),
            cli_version: env!("CARGO_PKG_VERSION").into(),
            ephemeral: false,
            preview: String::new(),
            name: self.name(thread_id),
            project_id: None,
            forked_from_id: live.forked_from.clone(),
            parent_thread_id: None,
            agent_nickname: None,
            created_at: now,
            updated_at: now,
        }
    }

    pub fn name(&self, thread_id: &str) -> Option<String> {
        self.names.lock().ok()?.get(thread_id).cloned()
    }

    /// Names a thread; names are kept in `$TROUPE_HOME/thread_names.json`.
    pub async fn set_name(&self, thread_id: &str, name: String) -> Result<(), HubError> {
        let snapshot = {
            let mut names = self.names.lock().map_err(request)?;
            names.insert(thread_id.to_string(), name);
            serde_json::to_vec_pretty(&*names).map_err(request)?
        };
        let path = self.home.join("thread_names.json");
        let tmp = self.home.join("thread_names.json.tmp");
        tokio::fs::write(&tmp, snapshot).await.map_err(request)?;
        tokio::fs::rename(&tmp, &path).await.map_err(request)?;
        Ok(())
    }

    /// Stops a loaded thread and waits until its session has stopped (before archiving it).
    pub async fn unload(&self, thread_id: &str) {
        let live = match self.threads.lock() {
            Ok(mut threads) => threads.remove(thread_id),
            Err(_) => None,
        };
        if let Some(live) = live {
            let mut stopped = live.stopped.clone();
            drop(live);
            let wait = stopped.wait_for(|stopped| *stopped);
            let _ = tokio::time::timeout(std::time::Duration::from_secs(15), wait).await;
        }
    }

    /// Starts a thread from a copy of another's history.
    pub async fn fork(
        &self,
        thread_id: &str,
        at_turn: Option<u64>,
    ) -> Result<(String, Arc<LiveThread>), HubError> {
        let source = self.summary(thread_id)?;
        let home = self.home.clone();
        let store = self.store.clone();
        let id = source.id.to_string();
        let forked =
            tokio::task::spawn_blocking(move || ops::fork(&home, store.as_deref(), &id, at_turn))
                .await
                .map_err(request)?
                .map_err(request)?;
        let forked_id = forked.id.to_string();
        let live = self.thread(&forked_id).await?;
        Ok((forked_id, live))
    }

    /// Ends every thread's running turn (recorded), releases their locks, stops the runtime.
    pub async fn shutdown(&self) {
        self.runtime.shutdown(SHUTDOWN_GRACE).await;
    }
}

async fn snapshot_status(live: &LiveThread) -> ThreadStatus {
    let (tx, rx) = tokio::sync::oneshot::channel();
    if live.control.send(Control::Snapshot { reply: tx }).is_err() {
        return ThreadStatus::NotLoaded;
    }
    rx.await
        .map(|(status, _)| status)
        .unwrap_or(ThreadStatus::NotLoaded)
}

#[path = "attach.rs"]
mod attach;

/// The turns a rollout records (read on a blocking thread).
pub async fn read_turns(
    thread_id: &str,
    path: &Path,
) -> Vec<troupe_app_server_protocol::protocol::Turn> {
    let path = path.to_path_buf();
    let id = thread_id.to_string();
    tokio::task::spawn_blocking(move || {
        match troupe_actors::rollout_recorder::loader::load(&path) {
            Ok(loaded) => turns_from_rollout(&id, &loaded.lines),
            Err(err) => {
                tracing::warn!(%err, "cannot read the rollout");
                Vec::new()
            }
        }
    })
    .await
    .unwrap_or_default()
}

/// Codex's check: a thread id is a UUID.
pub fn check_thread_id(thread_id: &str) -> Result<(), HubError> {
    thread_id
        .parse::<troupe_messages::ids::ThreadId>()
        .map(|_| ())
        .map_err(|err| request(format!("invalid thread id: {err}")))
}

/// The resolved sandbox as the wire reports it.
pub fn sandbox_policy(settings: &SessionSettings) -> SandboxPolicy {
    match settings.sandbox_mode {
        SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        SandboxMode::ReadOnly => SandboxPolicy::ReadOnly {
            network_access: false,
        },
        SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
            writable_roots: settings
                .sandbox
                .writable_roots
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            network_access: settings.sandbox.network_access,
            exclude_tmpdir_env_var: settings.sandbox.exclude_tmpdir_env_var,
            exclude_slash_tmp: settings.sandbox.exclude_slash_tmp,
        },
    }
}

/// A TOML string literal.
pub fn toml_string(value: &str) -> String {
    serde_json::Value::String(value.to_string()).to_string()
}

fn load_names(home: &Path) -> HashMap<String, String> {
    std::fs::read(home.join("thread_names.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

impl Hub {
    /// A client went away: no thread sends to it any more (the threads run on).
    pub fn disconnect(&self, conn: u64) {
        let threads: Vec<_> = match self.threads.lock() {
            Ok(threads) => threads.values().cloned().collect(),
            Err(_) => return,
        };
        for live in threads {
            let _ = live.control.send(Control::Unsubscribe { conn });
        }
    }
}

/// A sub-agent's source carries its place in the tree (its task path as `agent_path`); any
/// other thread was started through the app-server.
fn source_of(summary: &ThreadSummary) -> SessionSource {
    match (&summary.task_path, summary.parent) {
        (Some(task_path), Some(parent)) => SessionSource::SubAgent {
            sub_agent: SubAgentSource::ThreadSpawn {
                parent_thread_id: parent.to_string(),
                depth: summary.depth,
                agent_path: Some(task_path.clone()),
                agent_nickname: summary.nickname.clone(),
                agent_role: None,
            },
        },
        _ => SessionSource::Named("appServer".into()),
    }
}
