//! A running command's output, streamed as it comes: coalesced (a flush per
//! [`FLUSH_BYTES`] or [`FLUSH_AFTER`] after the first unsent byte), decoded as UTF-8 text
//! without ever splitting a character across two chunks (invalid bytes become U+FFFD), and
//! bounded per command ([`STREAMED_OUTPUT_PER_COMMAND`] of text across both pipes; past it
//! nothing more is streamed, and the command's final result is unchanged).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use troupe_messages::events::ExecOutputStream;
use troupe_messages::tools::ExecOutputSink;
pub use troupe_messages::tools::STREAMED_OUTPUT_PER_COMMAND;

/// Unsent output beyond this many bytes is sent at once.
pub const FLUSH_BYTES: usize = 8 * 1024;
/// Unsent output is sent at the latest this long after its first byte arrived.
pub const FLUSH_AFTER: Duration = Duration::from_millis(20);

/// The live output of one command: its pipes share one budget.
#[derive(Clone)]
pub struct LiveOutput {
    sink: ExecOutputSink,
    remaining: Arc<AtomicUsize>,
}

impl LiveOutput {
    /// Output of one command to `sink`, at most `budget` bytes of text in all.
    pub fn new(sink: ExecOutputSink, budget: usize) -> Self {
        Self {
            sink,
            remaining: Arc::new(AtomicUsize::new(budget)),
        }
    }

    /// The coalescer of one of the command's pipes.
    pub fn stream(&self, stream: ExecOutputStream) -> StreamCoalescer {
        StreamCoalescer {
            live: self.clone(),
            stream,
            pending: Vec::new(),
            since: None,
            exhausted: false,
        }
    }

    /// Takes up to `want` bytes of the budget; returns how many were granted.
    fn take_budget(&self, want: usize) -> usize {
        let before = self
            .remaining
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                Some(left.saturating_sub(want))
            })
            .unwrap_or(0);
        before.min(want)
    }
}

/// Collects one pipe's bytes and sends them on in chunks.
pub struct StreamCoalescer {
    live: LiveOutput,
    stream: ExecOutputStream,
    pending: Vec<u8>,
    /// When the oldest unsent byte arrived.
    since: Option<Instant>,
    /// The command's budget ran out: nothing more is kept or sent.
    exhausted: bool,
}

impl StreamCoalescer {
    /// Adds bytes just read; sends them at once when enough are pending.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.exhausted || bytes.is_empty() {
            return;
        }
        self.pending.extend_from_slice(bytes);
        self.since.get_or_insert_with(Instant::now);
        if self.pending.len() >= FLUSH_BYTES {
            self.flush();
        }
    }

    /// When pending output must be sent, if any is pending.
    pub fn deadline(&self) -> Option<Instant> {
        self.since.map(|since| since + FLUSH_AFTER)
    }

    /// Sends what is pending, keeping back an incomplete character at the end.
    pub fn flush(&mut self) {
        let complete = complete_utf8_len(&self.pending);
        self.send(complete);
    }

    /// The pipe closed: sends everything, an incomplete last character included.
    pub fn finish(mut self) {
        let all = self.pending.len();
        self.send(all);
    }

    fn send(&mut self, len: usize) {
        self.since = None;
        if self.exhausted || len == 0 {
            return;
        }
        let bytes: Vec<u8> = self.pending.drain(..len).collect();
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        let granted = self.live.take_budget(text.len());
        if granted < text.len() {
            self.exhausted = true;
            self.pending.clear();
            text.truncate(floor_char_boundary(&text, granted));
        }
        if !text.is_empty() {
            self.live.sink.send(self.stream, text);
        }
    }
}

/// The length of `bytes` without an incomplete UTF-8 character at its end (one whose
/// remaining bytes have not arrived yet).
pub fn complete_utf8_len(bytes: &[u8]) -> usize {
    let len = bytes.len();
    // A character is at most 4 bytes: its lead byte is among the last 4.
    for back in 1..=len.min(4) {
        let at = len - back;
        let byte = bytes[at];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: keep looking for the lead
        }
        let width = match byte {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1, // not a lead byte: invalid, replaced as it is
        };
        return if back < width { at } else { len };
    }
    len
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
