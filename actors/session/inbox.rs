//! The thread's inbox: messages `troupe queue` left for a thread from another process, one
//! file each under `$TROUPE_HOME/queue/<thread_id>/`, delivered by the process that holds the
//! thread's rollout lock.
//!
//! A message is written atomically (a hidden temp file renamed to `<millis>-<id>.json`), so a
//! reader never sees half of one. A reader *claims* a message by renaming it to
//! `<name>.claimed-<pid>`: a rename succeeds for one reader only, so each message is taken
//! once; a claim whose process died is taken over. While a turn runs, the session's poller
//! claims what arrived every [`POLL_EVERY`] and the session injects it into the turn, where
//! it joins the history at the next sampling boundary; its file is deleted once the turn has
//! recorded it. A message the turn never took (it arrived after the turn's last request) goes
//! back to the inbox when the turn ends, for the next turn or process. A resumed
//! thread claims its waiting messages when it starts: they become input of its next turn and
//! are deleted once that turn runs (put back if the process stops first).
//!
//! Besides steering text, a message may carry another op ([`QueuedOp`]: an interrupt, an
//! approval's decision, a question's answers), which is how an app-server following a thread
//! another process holds steers, stops and answers it. Those are handled by the holder's
//! session as the ops they stand for, once, while a turn runs; waiting at a resume they are
//! stale (meant for a turn of the previous holder) and dropped.

use super::SessionState;
use ractor::ActorRef;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio_util::task::AbortOnDropHandle;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::{SessionMsg, TurnMsg};
use troupe_messages::ops::{Op, QueuedOp, UserInput};

/// How often a running turn's inbox is looked at.
pub const POLL_EVERY: Duration = Duration::from_millis(200);
/// A queued message larger than this is refused (by `enqueue`) or set aside (by a reader).
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;
const CLAIMED: &str = ".claimed-";

/// One queued message, as stored. Steering is written as `text` alone (the one format
/// `troupe queue` ever wrote, so older files and older readers agree); any other op is under
/// `op`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedMessage {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<QueuedOp>,
    /// Milliseconds since the Unix epoch.
    pub queued_at_ms: u64,
}

impl QueuedMessage {
    /// What the message asks; none for a message that asks nothing (empty steering).
    fn into_op(self) -> Option<QueuedOp> {
        let op = match (self.op, self.text) {
            (Some(op), _) => op,
            (None, Some(text)) => QueuedOp::Steer { text },
            (None, None) => return None,
        };
        match &op {
            QueuedOp::Steer { text } if text.trim().is_empty() => None,
            _ => Some(op),
        }
    }
}

/// A message taken by this process: its file (renamed) and what it asks.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    pub path: PathBuf,
    pub op: QueuedOp,
}

impl Claimed {
    /// The steering text, for a message that steers.
    pub fn text(&self) -> Option<&str> {
        match &self.op {
            QueuedOp::Steer { text } => Some(text),
            _ => None,
        }
    }
}

#[derive(Debug, Error)]
pub enum InboxError {
    #[error("the message is empty")]
    Empty,
    #[error("the message is {0} bytes; at most {MAX_MESSAGE_BYTES} can be queued")]
    TooLarge(usize),
    #[error("cannot write to the inbox {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where the messages for `thread_id` wait.
pub fn inbox_dir(troupe_home: &Path, thread_id: ThreadId) -> PathBuf {
    troupe_home.join("queue").join(thread_id.to_string())
}

/// Queues `text` for `thread_id`; returns the message's id.
pub fn enqueue(troupe_home: &Path, thread_id: ThreadId, text: &str) -> Result<String, InboxError> {
    enqueue_op(
        troupe_home,
        thread_id,
        QueuedOp::Steer {
            text: text.to_string(),
        },
    )
}

/// Queues `op` for `thread_id`; returns the message's id.
pub fn enqueue_op(
    troupe_home: &Path,
    thread_id: ThreadId,
    op: QueuedOp,
) -> Result<String, InboxError> {
    if let QueuedOp::Steer { text } = &op {
        if text.trim().is_empty() {
            return Err(InboxError::Empty);
        }
        if text.len() > MAX_MESSAGE_BYTES {
            return Err(InboxError::TooLarge(text.len()));
        }
    }
    let dir = inbox_dir(troupe_home, thread_id);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| InboxError::Io { path, source }
    };
    let id = uuid::Uuid::now_v7().to_string();
    let queued_at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    let message = match op {
        QueuedOp::Steer { text } => QueuedMessage {
            id: id.clone(),
            text: Some(text),
            op: None,
            queued_at_ms,
        },
        op => QueuedMessage {
            id: id.clone(),
            text: None,
            op: Some(op),
            queued_at_ms,
        },
    };
    let name = format!("{queued_at_ms:013}-{id}.json");
    let tmp = dir.join(format!(".{name}.tmp"));
    let body = serde_json::to_vec(&message).map_err(|err| InboxError::Io {
        path: tmp.clone(),
        source: std::io::Error::other(err),
    })?;
    if body.len() > MAX_MESSAGE_BYTES {
        return Err(InboxError::TooLarge(body.len()));
    }
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let written = std::fs::File::create(&tmp)
        .and_then(|mut file| file.write_all(&body).and_then(|()| file.sync_all()));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&tmp)(err));
    }
    let target = dir.join(&name);
    std::fs::rename(&tmp, &target).map_err(|err| {
        let _ = std::fs::remove_file(&tmp);
        io(&target)(err)
    })?;
    Ok(id)
}

/// Takes every waiting message of `dir`, oldest first (and claims of dead processes). A file
/// that is not a message is renamed `<name>.bad` and left for the user.
pub fn claim_all(dir: &Path) -> Vec<Claimed> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut waiting: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if name.starts_with('.') {
                return None;
            }
            match name.split_once(CLAIMED) {
                None if name.ends_with(".json") => Some((name, entry.path())),
                Some((original, pid)) => {
                    let pid: u32 = pid.parse().ok()?;
                    (pid != me && !crate::rollout_recorder::lock::alive(pid))
                        .then(|| (original.to_string(), entry.path()))
                }
                None => None,
            }
        })
        .collect();
    waiting.sort();
    let mut claimed = Vec::new();
    for (original, path) in waiting {
        let mine = dir.join(format!("{original}{CLAIMED}{me}"));
        // Another reader renamed it first: it is theirs.
        if std::fs::rename(&path, &mine).is_err() {
            continue;
        }
        match read_message(&mine) {
            Some(op) => claimed.push(Claimed { path: mine, op }),
            None => {
                tracing::warn!(path = %mine.display(), "not a queued message; set aside as .bad");
                let _ = std::fs::rename(&mine, dir.join(format!("{original}.bad")));
            }
        }
    }
    claimed
}

fn read_message(path: &Path) -> Option<QueuedOp> {
    let text = troupe_config::regular_file::read_to_string(path).ok()?;
    if text.len() > MAX_MESSAGE_BYTES + 4096 {
        return None;
    }
    serde_json::from_str::<QueuedMessage>(&text)
        .ok()
        .and_then(QueuedMessage::into_op)
}

/// Gives claimed messages back (their original names), for the next reader.
pub fn unclaim(paths: &[PathBuf]) {
    for path in paths {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some((original, _)) = name.split_once(CLAIMED) {
            let _ = std::fs::rename(path, path.with_file_name(original));
        }
    }
}

/// Forgets delivered messages.
pub fn remove(paths: &[PathBuf]) {
    for path in paths {
        let _ = std::fs::remove_file(path);
    }
}

/// A session's inbox: the poller (active while a turn runs) and the claims taken at resume.
pub(super) struct Inbox {
    dir: PathBuf,
    active: Arc<AtomicBool>,
    _poller: AbortOnDropHandle<()>,
    /// Claimed when the thread resumed and held in the session's input queue: deleted once
    /// a turn has them, given back if the session stops first.
    held: Vec<PathBuf>,
    /// Claimed while a turn ran and injected into it as input number `seq` of the session's
    /// queue: deleted once the turn recorded that input, given back if it never does.
    injected: Vec<(u64, PathBuf)>,
}

impl Inbox {
    /// Starts the poller of `thread_id`'s inbox; it claims nothing until a turn runs.
    pub(super) fn start(
        myself: ActorRef<SessionMsg>,
        troupe_home: &Path,
        thread_id: ThreadId,
    ) -> Self {
        let dir = inbox_dir(troupe_home, thread_id);
        let active = Arc::new(AtomicBool::new(false));
        let poller = tokio::spawn(poll(myself, dir.clone(), active.clone()));
        Self {
            dir,
            active,
            _poller: AbortOnDropHandle::new(poller),
            held: Vec::new(),
            injected: Vec::new(),
        }
    }

    /// A resumed thread: takes the waiting messages (for the next turn's input). Any other
    /// op waiting was meant for a turn of the process that held the thread before: dropped.
    pub(super) async fn claim_waiting(&mut self) -> Vec<String> {
        let dir = self.dir.clone();
        let claimed = tokio::task::spawn_blocking(move || claim_all(&dir))
            .await
            .unwrap_or_default();
        let (steering, stale): (Vec<Claimed>, Vec<Claimed>) =
            claimed.into_iter().partition(|c| c.text().is_some());
        if !stale.is_empty() {
            let paths: Vec<PathBuf> = stale.into_iter().map(|c| c.path).collect();
            tokio::task::spawn_blocking(move || remove(&paths));
        }
        self.held.extend(steering.iter().map(|c| c.path.clone()));
        steering
            .into_iter()
            .filter_map(|c| match c.op {
                QueuedOp::Steer { text } => Some(text),
                _ => None,
            })
            .collect()
    }

    /// Called after every message the session handled: poll only while a turn runs; the
    /// messages held since the resume are delivered once one does.
    pub(super) fn turn_running(&mut self, running: bool) {
        self.active.store(running, Ordering::Relaxed);
        if running && !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            tokio::task::spawn_blocking(move || remove(&held));
        }
    }

    /// The running turn recorded its input up to `seq`: those messages are delivered.
    pub(super) fn consumed_up_to(&mut self, seq: u64) {
        let (delivered, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.injected)
            .into_iter()
            .partition(|(n, _)| *n <= seq);
        self.injected = waiting;
        if !delivered.is_empty() {
            let paths: Vec<PathBuf> = delivered.into_iter().map(|(_, path)| path).collect();
            tokio::task::spawn_blocking(move || remove(&paths));
        }
    }

    /// The turn ended: what was injected and never recorded goes back to the inbox; returns
    /// its numbers in the session's input queue, for the queue to forget them too.
    pub(super) fn take_back_undelivered(&mut self) -> Vec<u64> {
        let undelivered = std::mem::take(&mut self.injected);
        let seqs = undelivered.iter().map(|(seq, _)| *seq).collect();
        let paths: Vec<PathBuf> = undelivered.into_iter().map(|(_, path)| path).collect();
        if !paths.is_empty() {
            tokio::task::spawn_blocking(move || unclaim(&paths));
        }
        seqs
    }

    /// The session stops: messages it held but never ran go back to the inbox.
    pub(super) async fn release(&mut self) {
        self.active.store(false, Ordering::Relaxed);
        let mut back = std::mem::take(&mut self.held);
        back.extend(
            std::mem::take(&mut self.injected)
                .into_iter()
                .map(|(_, path)| path),
        );
        if !back.is_empty() {
            let _ = tokio::task::spawn_blocking(move || unclaim(&back)).await;
        }
    }
}

impl SessionState {
    /// What the poller claimed (`ops[i]` from `claimed[i]`). Steering joins the running turn
    /// at its next sampling boundary (like typed input); with no turn running any more it
    /// goes back to the inbox for the next turn or process. Any other op is handled as if
    /// submitted here, then forgotten: an interrupt naming a turn that is no longer the
    /// running one is dropped (it was meant for a turn that has ended).
    pub(super) async fn on_queued_input(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        ops: Vec<QueuedOp>,
        claimed: Vec<PathBuf>,
    ) {
        let mut give_back = Vec::new();
        let mut delivered = Vec::new();
        for (op, path) in ops.into_iter().zip(claimed) {
            let running = self.turn.as_ref().filter(|_| !self.shutting_down);
            let submission = "queued".to_string();
            match op {
                QueuedOp::Steer { text } => match running {
                    Some(turn) => {
                        let items = vec![UserInput::Text { text }];
                        let seq = self.queue.push(items.clone());
                        self.inbox.injected.push((seq, path));
                        let _ = turn.actor.send_message(TurnMsg::InjectInput { seq, items });
                    }
                    None => give_back.push(path),
                },
                QueuedOp::Interrupt { turn_id } => {
                    delivered.push(path);
                    let current = running.map(|turn| turn.id);
                    if current.is_some() && (turn_id.is_none() || turn_id == current) {
                        self.submit_here(myself, submission, Op::Interrupt).await;
                    }
                }
                QueuedOp::ExecApproval { call_id, decision } => {
                    delivered.push(path);
                    let op = Op::ExecApproval { call_id, decision };
                    self.submit_here(myself, submission, op).await;
                }
                QueuedOp::AgentApproval {
                    thread_id,
                    call_id,
                    decision,
                } => {
                    delivered.push(path);
                    let op = Op::AgentApproval {
                        thread_id,
                        call_id,
                        decision,
                    };
                    self.submit_here(myself, submission, op).await;
                }
                QueuedOp::UserInputAnswer { call_id, answers } => {
                    delivered.push(path);
                    let op = Op::UserInputAnswer { call_id, answers };
                    self.submit_here(myself, submission, op).await;
                }
            }
        }
        if !give_back.is_empty() {
            tokio::task::spawn_blocking(move || unclaim(&give_back));
        }
        if !delivered.is_empty() {
            tokio::task::spawn_blocking(move || remove(&delivered));
        }
    }

    async fn submit_here(&mut self, myself: &ActorRef<SessionMsg>, id: String, op: Op) {
        self.on_submit(myself, troupe_messages::ops::Submission { id, op })
            .await;
    }

    /// The turn ended: queued messages it never took wait in the inbox again, instead of
    /// starting a turn of their own (as a message queued while the thread is idle does).
    pub(super) fn return_undelivered_queued_input(&mut self) {
        let seqs = self.inbox.take_back_undelivered();
        self.queue.remove(&seqs);
    }
}

/// Every `POLL_EVERY` while `active`: claim what arrived and hand it to the session.
async fn poll(session: ActorRef<SessionMsg>, dir: PathBuf, active: Arc<AtomicBool>) {
    loop {
        tokio::time::sleep(POLL_EVERY).await;
        if !active.load(Ordering::Relaxed) {
            continue;
        }
        let from = dir.clone();
        let Ok(claimed) = tokio::task::spawn_blocking(move || claim_all(&from)).await else {
            continue;
        };
        if claimed.is_empty() {
            continue;
        }
        let claimed_paths: Vec<PathBuf> = claimed.iter().map(|c| c.path.clone()).collect();
        let ops = claimed.into_iter().map(|c| c.op).collect();
        let msg = SessionMsg::QueuedInput {
            ops,
            claimed: claimed_paths.clone(),
        };
        if session.send_message(msg).is_err() {
            // The session is gone: the messages wait for the next one.
            let _ = tokio::task::spawn_blocking(move || unclaim(&claimed_paths)).await;
            return;
        }
    }
}

#[cfg(test)]
#[path = "inbox_tests.rs"]
mod tests;
