//! The one way from a turn's subtree to its session, counted.
//!
//! The turn actor, its tool calls and its PTY sessions all report to the session, each from
//! its own task: ractor promises FIFO per sender only, so nothing orders a tool call's
//! `ExecCommandEnd` against the turn's `TurnEnded`, or the turn's last `TurnItem` against
//! the session's own decision to stop it. Every such message therefore goes through a
//! [`TurnOutbox`], which counts it before sending. The end of a turn carries the count (or the
//! session reads it once the stopped turn is gone), and the session records the end only once
//! it has handled that many of the turn's messages (`session/turn_ledger.rs`). Whatever was
//! sent before the end is thus handled before it, by construction.

use ractor::ActorRef;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ids::TurnId;
use troupe_messages::mailboxes::SessionMsg;

/// Where the events of a turn's tool calls, PTY sessions and hooks go: the session, as this
/// turn's ([`TurnOutbox::event_sink`]; a unit test collects them instead). Lives here, at the
/// bottom, so the orchestrator and the hooks take the route without naming the turn actor.
pub type EventSink = Arc<dyn Fn(EventMsg) + Send + Sync>;

/// A turn's counted sender to its session; clones share the count.
#[derive(Debug, Clone)]
pub struct TurnOutbox {
    session: ActorRef<SessionMsg>,
    turn_id: TurnId,
    sent: Arc<AtomicU64>,
}

impl TurnOutbox {
    pub fn new(session: ActorRef<SessionMsg>, turn_id: TurnId) -> Self {
        Self {
            session,
            turn_id,
            sent: Arc::default(),
        }
    }

    pub fn turn_id(&self) -> TurnId {
        self.turn_id
    }

    /// Sends one of the turn's messages (it must carry this turn's id), counted first so
    /// that a count read after this call returns includes it.
    pub fn send(&self, msg: SessionMsg) {
        self.sent.fetch_add(1, Ordering::SeqCst);
        let _ = self.session.send_message(msg);
    }

    /// An event for subscribers, as this turn's.
    pub fn event(&self, msg: EventMsg) {
        self.send(SessionMsg::TurnEvent {
            turn_id: self.turn_id,
            msg,
        });
    }

    /// This outbox as an [`EventSink`]: every event counted and sent as this turn's.
    pub fn event_sink(&self) -> EventSink {
        let outbox = self.clone();
        Arc::new(move |msg| outbox.event(msg))
    }

    /// How many messages went out so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// The turn's last message: not counted itself, it carries the count of those before it.
    pub fn end(&self, last_agent_message: Option<String>, aborted: Option<AbortReason>) {
        let _ = self.session.send_message(SessionMsg::TurnEnded {
            turn_id: self.turn_id,
            last_agent_message,
            aborted,
            messages_before: self.sent(),
        });
    }
}
