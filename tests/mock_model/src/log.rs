//! The request log (`--log`): one line per request, for benchmarks.
//!
//! ```text
//! <n> <unix_ms> <method> <path> tool_outputs=<k> input_items=<m> recv_ns=<t> first_byte_ns=<t> last_byte_ns=<t> body_bytes=<b>
//! ```
//!
//! `recv_ns` is when the whole request body had arrived; `first_byte_ns` / `last_byte_ns` are
//! when the first and the last chunk of a streamed (SSE) body were handed to the HTTP stack,
//! which writes them to the socket at once unless the socket is full. All three are
//! `CLOCK_REALTIME` nanoseconds since the Unix epoch, so a harness can compare them with its
//! own clock. The line is written just before the last chunk is handed over, so it is in the
//! file before the client can have the whole response. Bodies that are not streamed, and
//! streams that never sent their last chunk (a client that went away), log `-` for the byte
//! times.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::Method;
use serde_json::Value;

use crate::auto;
use crate::wire::{lock, Shared};

/// Nanoseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// The log line of one request, completed as its response body goes out and written once
/// (at the last chunk, or when dropped).
pub(crate) struct LogLine {
    shared: Arc<Shared>,
    head: String,
    first_ns: Option<u128>,
    bytes: u64,
    written: bool,
}

impl LogLine {
    /// Starts the line of request `n` (now: the request has fully arrived), or `None` when
    /// the server has no log.
    pub(crate) fn start(
        shared: &Arc<Shared>,
        n: u64,
        method: &Method,
        path: &str,
        body: &Value,
    ) -> Option<LogLine> {
        shared.log.as_ref()?;
        let recv_ns = unix_nanos();
        let millis = recv_ns / 1_000_000;
        let outputs = auto::count_tool_outputs(body);
        let items = body
            .get("input")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Some(LogLine {
            shared: Arc::clone(shared),
            head: format!(
                "{n} {millis} {method} {path} tool_outputs={outputs} input_items={items} recv_ns={recv_ns}"
            ),
            first_ns: None,
            bytes: 0,
            written: false,
        })
    }

    /// A body chunk of `len` bytes is about to be handed to the HTTP stack; `last` if no
    /// other chunk follows.
    pub(crate) fn chunk(&mut self, len: usize, last: bool) {
        let now = unix_nanos();
        self.first_ns.get_or_insert(now);
        self.bytes += len as u64;
        if last {
            self.write(Some(now));
        }
    }

    fn write(&mut self, last_ns: Option<u128>) {
        if self.written {
            return;
        }
        self.written = true;
        let mut line = std::mem::take(&mut self.head);
        let stamp = |t: Option<u128>| t.map_or_else(|| "-".to_owned(), |t| t.to_string());
        let _ = write!(
            line,
            " first_byte_ns={} last_byte_ns={} body_bytes={}",
            stamp(self.first_ns),
            stamp(last_ns),
            self.bytes
        );
        if let Some(log) = &self.shared.log {
            // Logging is best effort: a full disk must not fail the request.
            let _ = writeln!(lock(log), "{line}");
        }
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        self.write(None);
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
