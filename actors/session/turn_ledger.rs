//! Whether the session has handled every message a turn sent before its end (see
//! `turn/outbox.rs`): the end is recorded only then, whatever order the mailbox delivered
//! the messages of the turn's several senders in.

/// The count of one turn's messages handled, against the count sent before its end.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TurnLedger {
    handled: u64,
    /// Known once the turn has ended (its `TurnEnded`, or its stop by the session).
    sent_before_end: Option<u64>,
}

impl TurnLedger {
    /// One more of the turn's messages was handled.
    pub fn handled_one(&mut self) {
        self.handled += 1;
    }

    /// The turn ended after sending `sent` messages.
    pub fn ended_after(&mut self, sent: u64) {
        self.sent_before_end = Some(sent);
    }

    /// The turn has ended and everything it sent before has been handled.
    pub fn settled(&self) -> bool {
        self.sent_before_end
            .is_some_and(|sent| self.handled >= sent)
    }
}

#[cfg(test)]
#[path = "turn_ledger_tests.rs"]
mod tests;
