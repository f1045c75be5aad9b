//! Following a thread another Troupe process holds (its rollout lock names a live pid: a TUI,
//! `troupe exec`, another app-server). One process runs a thread at a time, so this server
//! does not open it: it reads the rollout as the holder appends to it (the history, then each
//! recorded event as it lands) and reaches the holder through the thread's inbox
//! (`$TROUPE_HOME/queue/<thread_id>/`, the path `troupe queue` uses), where the holder's
//! session claims each message while a turn runs and handles it as the op it stands for:
//! steering, an interrupt of a named turn, an approval's decision, a question's answers.
//!
//! What a follower cannot see: what the holder never records (streaming deltas, a command's
//! live output and its begin; the item comes whole at its end). What it cannot do: start a
//! turn, compact, change settings (those need the thread: stop the holder, then resume).
//! When the holder lets go (it stopped, or it was killed), the follow ends and the thread is
//! `notLoaded` here; the next request loads it as usual (a dead holder's lock is taken over).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;
use troupe_actors::rollout_recorder::lock;
use troupe_actors::runtime::ThreadClient;
use troupe_actors::session::inbox;
use troupe_messages::events::Event;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::ops::{Op, QueuedOp, UserInput};
use troupe_messages::rollout::RolloutLine;

/// How often the rollout is looked at for new lines (and the holder for life).
const FOLLOW_EVERY: Duration = Duration::from_millis(100);

/// The live process holding `rollout`'s lock, other than this one.
pub fn holder(rollout: &Path) -> Option<u32> {
    lock::holder(rollout)
}

/// A thread another process holds, followed from its rollout.
pub struct HeldThread {
    thread_id: ThreadId,
    home: PathBuf,
    pid: u32,
    lines: mpsc::UnboundedReceiver<RolloutLine>,
    follower: tokio::task::JoinHandle<()>,
}

impl Drop for HeldThread {
    fn drop(&mut self) {
        self.follower.abort();
    }
}

impl HeldThread {
    /// Starts following the rollout of `thread_id`, which process `pid` holds; returns the
    /// lines recorded so far (the follow goes on from the end of the last whole one).
    pub async fn follow(
        home: &Path,
        thread_id: ThreadId,
        rollout: &Path,
        pid: u32,
    ) -> Result<(Self, Vec<RolloutLine>), String> {
        let path = rollout.to_path_buf();
        let (lines, offset) = tokio::task::spawn_blocking(move || read_from(&path, 0))
            .await
            .map_err(|err| err.to_string())?
            .map_err(|err| format!("cannot read the rollout of thread {thread_id}: {err}"))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let follower = tokio::spawn(follow(rollout.to_path_buf(), pid, offset, tx));
        let held = Self {
            thread_id,
            home: home.to_path_buf(),
            pid,
            lines: rx,
            follower,
        };
        Ok((held, lines))
    }

    /// The pid of the holding process.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The next line the holder recorded; `None` once it let go of the thread.
    pub async fn next_line(&mut self) -> Option<RolloutLine> {
        self.lines.recv().await
    }

    /// Hands `op` to the holder through the thread's inbox. Only what a holder's session
    /// takes from its inbox goes: anything else is refused, naming the holder.
    pub fn submit(&self, op: Op) -> Result<(), String> {
        let queued = match op {
            Op::UserInput { items } => QueuedOp::Steer {
                text: steering_text(items)?,
            },
            Op::Interrupt => QueuedOp::Interrupt { turn_id: None },
            Op::ExecApproval { call_id, decision } => QueuedOp::ExecApproval { call_id, decision },
            Op::AgentApproval {
                thread_id,
                call_id,
                decision,
            } => QueuedOp::AgentApproval {
                thread_id,
                call_id,
                decision,
            },
            Op::UserInputAnswer { call_id, answers } => {
                QueuedOp::UserInputAnswer { call_id, answers }
            }
            Op::Compact
            | Op::OverrideTurnContext { .. }
            | Op::UpdateTurnSettings { .. }
            | Op::AgentInput { .. }
            | Op::Shutdown
            | Op::AgentUserInput { .. }
            | Op::CreateGoal { .. }
            | Op::RunUserShellCommand { .. } => return Err(self.not_here()),
        };
        self.enqueue(queued)
    }

    /// Stops the holder's turn `turn` (and only that one: a turn that ended meanwhile is not
    /// followed by another being stopped).
    pub fn interrupt(&self, turn: TurnId) -> Result<(), String> {
        self.enqueue(QueuedOp::Interrupt {
            turn_id: Some(turn),
        })
    }

    /// Why something that needs the thread itself cannot be done here.
    pub fn not_here(&self) -> String {
        held_elsewhere(self.thread_id, self.pid)
    }

    /// Written before the answer goes out (a small file, fsynced): the client is told
    /// whether the holder will get it.
    fn enqueue(&self, op: QueuedOp) -> Result<(), String> {
        inbox::enqueue_op(&self.home, self.thread_id, op)
            .map(|_| ())
            .map_err(|err| err.to_string())
    }
}

/// The error for what only the holding process can do.
pub fn held_elsewhere(thread_id: ThreadId, pid: u32) -> String {
    let program = crate::last_turns::holder_program(pid)
        .map(|line| format!(" (`{line}`)"))
        .unwrap_or_default();
    format!(
        "thread {thread_id} runs in another Troupe process, pid {pid}{program}; this server \
         follows it and can steer its running turn, interrupt it and answer its approvals. To \
         start turns here, stop that process (SIGTERM: its running turn is recorded as \
         interrupted) and resume the thread again."
    )
}

fn steering_text(items: Vec<UserInput>) -> Result<String, String> {
    let mut texts = Vec::with_capacity(items.len());
    for item in items {
        match item {
            UserInput::Text { text } => texts.push(text),
            UserInput::Image { .. } => {
                return Err("images cannot be queued for a thread another process holds".into())
            }
        }
    }
    Ok(texts.join("\n"))
}

/// Every `FOLLOW_EVERY`: the lines appended since `offset`, until the holder lets go (the
/// lock is read before the file, so whatever it wrote before letting go is read).
async fn follow(path: PathBuf, pid: u32, mut offset: u64, tx: mpsc::UnboundedSender<RolloutLine>) {
    loop {
        tokio::time::sleep(FOLLOW_EVERY).await;
        let from = path.clone();
        let read = tokio::task::spawn_blocking(move || {
            let held = lock::holder(&from) == Some(pid);
            (held, read_from(&from, offset))
        })
        .await;
        let Ok((held, read)) = read else { return };
        let Ok((lines, next)) = read else { return };
        offset = next;
        for line in lines {
            if tx.send(line).is_err() {
                return;
            }
        }
        if !held {
            return;
        }
    }
}

/// The whole lines of `path` after byte `offset`, and the offset after the last of them (a
/// line being written is left for the next read). Lines this build cannot parse are skipped,
/// as the loader skips them.
fn read_from(path: &Path, offset: u64) -> std::io::Result<(Vec<RolloutLine>, u64)> {
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
        return Ok((Vec::new(), offset));
    };
    let lines = bytes[..end]
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice::<RolloutLine>(line).ok())
        .collect();
    Ok((lines, offset + end as u64 + 1))
}

/// Where a pump's thread is: a session of this runtime, or one another process holds.
pub enum Link {
    Local(ThreadClient),
    Held(HeldThread),
}

/// What a pump's thread said next.
pub enum Incoming {
    /// An event of a local session.
    Event(Event),
    /// A line the holder recorded.
    Line(RolloutLine),
}

impl Link {
    pub async fn next(&mut self) -> Option<Incoming> {
        match self {
            Link::Local(client) => client.next_event().await.map(Incoming::Event),
            Link::Held(held) => held.next_line().await.map(Incoming::Line),
        }
    }

    pub fn submit(&mut self, op: Op) -> Result<(), String> {
        match self {
            Link::Local(client) => client.submit(op).map(|_| ()).map_err(|e| e.to_string()),
            Link::Held(held) => held.submit(op),
        }
    }

    /// Stops turn `turn` (the running one, as the pump knows it).
    pub fn interrupt(&mut self, turn: Option<TurnId>) -> Result<(), String> {
        match (self, turn) {
            (Link::Held(held), Some(turn)) => held.interrupt(turn),
            (link, _) => link.submit(Op::Interrupt),
        }
    }

    /// The process holding the thread, when it is another's.
    pub fn held_by(&self) -> Option<u32> {
        match self {
            Link::Local(_) => None,
            Link::Held(held) => Some(held.pid()),
        }
    }

    /// Why something that needs the thread itself cannot be done here, if it cannot.
    pub fn refuse_local_only(&self) -> Option<String> {
        match self {
            Link::Local(_) => None,
            Link::Held(held) => Some(held.not_here()),
        }
    }
}

#[cfg(test)]
#[path = "held_tests.rs"]
mod tests;
