//! The PTY sessions of one turn, and the one `ExecCommandEnd` each of them gets.
//!
//! A session is tracked from the moment it starts: under a ticket while `exec_command` waits
//! for its first output, then — if it outlives that call — under a session id for
//! `write_stdin`. Whoever takes it out of the set reports its end, exactly once: the call that
//! sees it exit, or [`ExecSessions::end_all`] when the turn ends (killing it first; the end
//! says so, with [`KILLED_EXIT_CODE`] and the output seen so far). Events go straight to the
//! session actor, so they arrive even while the turn is stopping, and a call reports an exit
//! while holding the set's lock: once `end_all` returns, every end of the turn has been sent,
//! ahead of anything the turn sends afterwards (its end, its abort).

use super::session::PtySession;
use crate::locking::lock;
use crate::turn::outbox::EventSink;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use troupe_messages::events::{EventMsg, ExecOutputStream};
use troupe_messages::tools::truncate_middle;

/// Live sessions a turn may hold; a new command past this is refused.
pub const MAX_SESSIONS: usize = 16;

/// Exit code reported for a session killed because its turn ended (128 + SIGKILL, as a shell
/// reports a killed command).
pub const KILLED_EXIT_CODE: i32 = 137;

/// A session still inside the `exec_command` call that started it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket(u64);

/// How a tracked session is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKey {
    /// Still in its `exec_command` call.
    Starting(Ticket),
    /// Handed to the model under this session id.
    Live(u32),
}

/// The sessions of one turn.
pub struct ExecSessions {
    inner: Mutex<Sessions>,
    events: EventSink,
    /// Bound of the output an end event carries (`tool_output_max_bytes`).
    max_output_bytes: usize,
}

#[derive(Default)]
struct Sessions {
    next_ticket: u64,
    next_id: u32,
    starting: HashMap<Ticket, Arc<PtySession>>,
    live: HashMap<u32, Arc<PtySession>>,
    /// Calls begun whose end is not reported yet: only these stream output, so no piece of
    /// output follows its command's end.
    open: HashSet<String>,
}

impl Sessions {
    fn take(&mut self, key: SessionKey) -> Option<Arc<PtySession>> {
        let session = match key {
            SessionKey::Starting(ticket) => self.starting.remove(&ticket),
            SessionKey::Live(id) => self.live.remove(&id),
        }?;
        self.open.remove(&session.call_id);
        Some(session)
    }
}

/// The end event of a session; `killed` says why it was killed, if it was.
fn end_event(session: &PtySession, exit_code: i32, killed: Option<&str>, max: usize) -> EventMsg {
    let transcript = String::from_utf8_lossy(&session.transcript()).into_owned();
    let mut aggregated_output = truncate_middle(&transcript, max);
    if let Some(why) = killed {
        if !aggregated_output.is_empty() && !aggregated_output.ends_with('\n') {
            aggregated_output.push('\n');
        }
        aggregated_output.push_str(&format!("[process killed: {why} while it was running]"));
    }
    EventMsg::ExecCommandEnd {
        call_id: session.call_id.clone(),
        command: session.command.clone(),
        exit_code: Some(exit_code),
        aggregated_output,
        duration_ms: session.started.elapsed().as_millis() as u64,
        timed_out: false,
        user_shell: false,
    }
}

impl ExecSessions {
    pub fn new(events: EventSink, max_output_bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Sessions::default()),
            events,
            max_output_bytes,
        }
    }

    /// Sends an event of a session (its begin) the way its end will go, so it stays ahead.
    pub fn tell(&self, msg: EventMsg) {
        (self.events)(msg);
    }

    /// A command starts: reports its begin, and from now on its output streams.
    pub fn begin(&self, call_id: &str, command: &[String], cwd: &Path) {
        let mut inner = lock(&self.inner);
        inner.open.insert(call_id.to_string());
        self.tell(EventMsg::ExecCommandBegin {
            call_id: call_id.to_string(),
            command: command.to_vec(),
            cwd: cwd.to_path_buf(),
            user_shell: false,
        });
    }

    /// A command that never started: its caller reports its end.
    pub fn abandon(&self, call_id: &str) {
        lock(&self.inner).open.remove(call_id);
    }

    /// A piece of a running command's output: reported only between its begin and its end
    /// (checked under the lock its end is taken under).
    pub fn output(&self, call_id: &str, stream: ExecOutputStream, chunk: String) {
        let inner = lock(&self.inner);
        if inner.open.contains(call_id) {
            self.tell(EventMsg::ExecCommandOutputDelta {
                call_id: call_id.to_string(),
                stream,
                chunk,
            });
        }
    }

    /// Room for one more session? Refused at `MAX_SESSIONS` live ones.
    pub fn has_room(&self) -> bool {
        lock(&self.inner).live.len() < MAX_SESSIONS
    }

    /// Tracks a session that just started; the turn's end kills it from now on.
    pub fn track(&self, session: Arc<PtySession>) -> Ticket {
        let mut inner = lock(&self.inner);
        inner.next_ticket += 1;
        let ticket = Ticket(inner.next_ticket);
        inner.starting.insert(ticket, session);
        ticket
    }

    /// The session outlives its `exec_command` call: gives it a session id. Refused past
    /// `MAX_SESSIONS` (it stays tracked: end it with `kill`); `None` if the turn's end took it.
    pub fn publish(&self, ticket: Ticket) -> Option<Result<u32, String>> {
        let mut inner = lock(&self.inner);
        if !inner.starting.contains_key(&ticket) {
            return None;
        }
        if inner.live.len() >= MAX_SESSIONS {
            return Some(Err(format!(
                "too many running sessions ({MAX_SESSIONS}); end one (for example send \
                 Ctrl-C with write_stdin chars \"\\u0003\") before starting another"
            )));
        }
        let session = inner.starting.remove(&ticket)?;
        inner.next_id += 1;
        let id = inner.next_id;
        inner.live.insert(id, session);
        Some(Ok(id))
    }

    pub fn get(&self, id: u32) -> Option<Arc<PtySession>> {
        lock(&self.inner).live.get(&id).cloned()
    }

    /// The session exited with `code`: forgets it and reports its end, unless the turn's end
    /// took it first (and reports it).
    pub fn report_exit(&self, key: SessionKey, code: i32) {
        let mut inner = lock(&self.inner);
        if let Some(session) = inner.take(key) {
            // Sent under the lock: see the module doc.
            self.tell(end_event(&session, code, None, self.max_output_bytes));
        }
    }

    /// Kills one session and reports its end; `why` is said in the end's output.
    pub async fn kill(&self, key: SessionKey, why: &str) {
        let taken = lock(&self.inner).take(key);
        if let Some(session) = taken {
            self.end(&session, why).await;
        }
    }

    /// Kills every session (turn end, interrupt, shutdown), each with its end reported.
    pub async fn end_all(&self, why: &str) {
        let mut sessions: Vec<Arc<PtySession>> = {
            let mut inner = lock(&self.inner);
            let live: Vec<_> = inner.live.drain().map(|(_, s)| s).collect();
            let all: Vec<_> = inner.starting.drain().map(|(_, s)| s).chain(live).collect();
            for session in &all {
                inner.open.remove(&session.call_id);
            }
            all
        };
        sessions.sort_by_key(|session| session.started);
        for session in sessions {
            self.end(&session, why).await;
        }
    }

    async fn end(&self, session: &PtySession, why: &str) {
        let event = match session.exit_code() {
            // It exited by itself and nobody saw it yet: its own code.
            Some(code) => end_event(session, code, None, self.max_output_bytes),
            None => {
                session.kill().await;
                end_event(session, KILLED_EXIT_CODE, Some(why), self.max_output_bytes)
            }
        };
        self.tell(event);
    }

    /// No session is tracked.
    pub fn is_empty(&self) -> bool {
        let inner = lock(&self.inner);
        inner.live.is_empty() && inner.starting.is_empty()
    }
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
