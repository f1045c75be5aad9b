//! Input typed while a turn runs: numbered, handed to the turn, and forgotten only once the
//! turn confirms it reached the history — so it is never lost and never sent twice.

use troupe_messages::ops::UserInput;

/// Pending input with sequence numbers.
#[derive(Debug, Default)]
pub struct InputQueue {
    next_seq: u64,
    pending: Vec<(u64, Vec<UserInput>)>,
}

impl InputQueue {
    /// Queues input and returns its number.
    pub fn push(&mut self, items: Vec<UserInput>) -> u64 {
        self.next_seq += 1;
        self.pending.push((self.next_seq, items));
        self.next_seq
    }

    /// The turn put everything up to `seq` into the history.
    pub fn consumed_up_to(&mut self, seq: u64) {
        self.pending.retain(|(n, _)| *n > seq);
    }

    /// Drops the entries numbered `seqs` (input that goes back where it came from).
    pub fn remove(&mut self, seqs: &[u64]) {
        self.pending.retain(|(n, _)| !seqs.contains(n));
    }

    /// Takes all unconsumed input, oldest first, as one list.
    pub fn take_all(&mut self) -> Vec<UserInput> {
        std::mem::take(&mut self.pending)
            .into_iter()
            .flat_map(|(_, items)| items)
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}
