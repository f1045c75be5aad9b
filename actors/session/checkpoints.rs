//! The session's checkpoints (`troupe rewind`): the turn's writable roots recorded before
//! its first tool can run and again when it ends, in the store under
//! `$TROUPE_HOME/checkpoints` ([`troupe_checkpoint`]).
//!
//! Each checkpoint runs on a blocking thread, after the one before it (they share the stat
//! cache and append to the thread's index in order). The "before" one runs while the model
//! is sampled: the turn's tools wait for its gate ([`CheckpointGate`]), so nothing a tool
//! does escapes it. The "after" one is awaited before the turn's end is announced, so the
//! state a rewind compares against is on disk before anyone can act on the ended turn.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use troupe_checkpoint::index::{self, IndexLine, Phase};
use troupe_checkpoint::{prune, Manifest, Options, PruneLimits, Store, Tracker};
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::policy::SandboxMode;
use troupe_messages::settings::SessionSettings;

/// Where a checkpoint is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateState {
    Pending,
    Done,
    Failed(String),
}

/// Resolves once the turn's "before" checkpoint is taken (or failed).
pub type CheckpointGate = watch::Receiver<GateState>;

/// Waits for the gate; the failure, if any, as a sentence for a warning.
pub async fn wait(gate: &mut CheckpointGate) -> Option<String> {
    match gate.wait_for(|s| *s != GateState::Pending).await {
        Ok(state) => match &*state {
            GateState::Failed(why) => Some(why.clone()),
            GateState::Pending | GateState::Done => None,
        },
        // The session is gone: nothing to wait for.
        Err(_) => None,
    }
}

/// A session's checkpoints, one after the other.
#[derive(Debug)]
pub struct SessionCheckpoints {
    thread_id: ThreadId,
    last: Option<CheckpointGate>,
    /// The newest manifest: the next checkpoint's stat cache (loaded from the index once).
    previous: Arc<Mutex<Option<Manifest>>>,
    /// What the roots looked like at the last checkpoint, kept up to date by inotify, so
    /// a checkpoint lists only the directories that changed.
    tracker: Arc<Mutex<Option<Tracker>>>,
    pruned: bool,
}

impl SessionCheckpoints {
    pub fn new(thread_id: ThreadId) -> Self {
        Self {
            thread_id,
            last: None,
            previous: Arc::default(),
            tracker: Arc::default(),
            pruned: false,
        }
    }

    /// Starts a checkpoint of turn `turn` (after any still running); `None` when
    /// checkpoints are off.
    pub fn schedule(
        &mut self,
        settings: &SessionSettings,
        turn: TurnId,
        phase: Phase,
    ) -> Option<CheckpointGate> {
        // An ephemeral run (its own rollout directory) leaves nothing on disk.
        if !settings.checkpoints.enabled || settings.rollout_dir.is_some() {
            return None;
        }
        let (done, gate) = watch::channel(GateState::Pending);
        let before = self.last.replace(gate.clone());
        let job = Job {
            store_dir: store_dir(&settings.troupe_home),
            thread: self.thread_id.to_string(),
            turn: turn.0,
            phase,
            roots: turn_roots(settings),
            options: options(settings, true),
            previous: self.previous.clone(),
            tracker: self.tracker.clone(),
            prune: (!std::mem::replace(&mut self.pruned, true)).then_some(PruneLimits {
                max_age_days: settings.checkpoints.max_age_days,
                max_total_bytes: settings.checkpoints.max_total_mb.saturating_mul(1 << 20),
            }),
        };
        // Not aborted with the session: the work is bounded and its result must reach the
        // index. Every checkpoint chains on the one before, and the turn's "after" one is
        // awaited before the turn's end is announced, so none is still running once a
        // session has recorded its last turn's end.
        tokio::spawn(async move {
            if let Some(mut before) = before {
                let _ = wait(&mut before).await;
            }
            let state = match tokio::task::spawn_blocking(move || job.run()).await {
                Ok(Ok(())) => GateState::Done,
                Ok(Err(err)) => GateState::Failed(format!("checkpoint not taken: {err}")),
                Err(err) => GateState::Failed(format!("checkpoint not taken: {err}")),
            };
            if let GateState::Failed(why) = &state {
                tracing::warn!("{why}");
            }
            let _ = done.send(state);
        });
        Some(gate)
    }
}

/// `$TROUPE_HOME/checkpoints`.
pub fn store_dir(home: &Path) -> PathBuf {
    home.join(troupe_config::home::CHECKPOINTS_DIR)
}

/// What a checkpoint covers under `settings`: the limits, and the paths never walked
/// (deny-read paths and the key files: a copy in the store would be a copy outside them).
pub fn options(settings: &SessionSettings, keep: bool) -> Options {
    let exclude = settings
        .sandbox
        .deny_read
        .iter()
        .chain(&settings.sandbox.stored_keys)
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    Options {
        max_dir_bytes: settings.checkpoints.max_dir_mb.saturating_mul(1 << 20),
        max_root_bytes: settings.checkpoints.max_total_mb.saturating_mul(1 << 20),
        exclude,
        keep,
    }
}

/// The roots a turn can write: the cwd, and under `workspace-write` the extra writable
/// roots (not the temporary directories); canonical, existing, none inside another.
pub fn turn_roots(settings: &SessionSettings) -> Vec<PathBuf> {
    let mut candidates = vec![settings.cwd.clone()];
    if settings.sandbox_mode == SandboxMode::WorkspaceWrite {
        candidates.extend(settings.sandbox.writable_roots.iter().cloned());
    }
    let mut roots: Vec<PathBuf> = candidates
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.is_dir() && p != Path::new("/"))
        .collect();
    roots.sort();
    roots.dedup();
    let all = roots.clone();
    roots.retain(|r| !all.iter().any(|other| other != r && r.starts_with(other)));
    roots
}

struct Job {
    store_dir: PathBuf,
    thread: String,
    turn: u64,
    phase: Phase,
    roots: Vec<PathBuf>,
    options: Options,
    previous: Arc<Mutex<Option<Manifest>>>,
    tracker: Arc<Mutex<Option<Tracker>>>,
    prune: Option<PruneLimits>,
}

impl Job {
    fn run(self) -> Result<(), troupe_checkpoint::CheckpointError> {
        let store = Store::open(&self.store_dir)?;
        let mut previous = self
            .previous
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if previous.is_none() {
            let lines = store.read_index(&self.thread)?;
            *previous = index::latest(&lines)
                .and_then(|line| line.checkpoint.as_deref())
                .and_then(|id| store.load_manifest(id).ok());
        }
        let mut tracker = self
            .tracker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if tracker
            .as_ref()
            .is_none_or(|t| *t.options() != self.options)
        {
            *tracker = Some(Tracker::new(self.options.clone(), true));
        }
        let taken = match tracker.as_mut() {
            Some(tracker) => tracker.take(&store, &self.roots, previous.as_ref()),
            None => store.take(&self.roots, previous.as_ref(), &self.options),
        };
        drop(tracker);
        let mut manifest = taken?;
        let id = match previous.as_ref() {
            Some(old) if old.same_trees(&manifest) => old.id.clone(),
            _ => {
                store.write_manifest_over(&mut manifest, previous.as_ref())?;
                manifest.id.clone()
            }
        };
        store.append_index(
            &self.thread,
            &IndexLine {
                turn: self.turn,
                phase: self.phase,
                checkpoint: Some(id.clone()),
                rollout_backup: None,
                at_ms: now_ms(),
            },
        )?;
        if manifest.id == id {
            *previous = Some(manifest);
        }
        drop(previous);
        if let Some(limits) = self.prune {
            if let Err(err) = prune(&store, limits) {
                tracing::warn!("checkpoints not pruned: {err}");
            }
        }
        Ok(())
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
