//! What the mock answers to one request: the scripted `MockResponse` and its
//! builders.
//!
//! Tests describe a whole conversation as a list of these; each request to
//! `/responses` pops the next one. The variants cover the happy path (SSE
//! streams) and the failure modes a client must survive (HTTP errors, streams
//! that break off or stall, malformed bytes).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use crate::events;

/// How the SSE byte stream is cut into writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunking {
    /// One write per event.
    Whole,
    /// The whole byte stream cut into writes of `n` bytes, each flushed
    /// separately (with a 1 ms pause), so events and even UTF-8 characters
    /// straddle chunk boundaries.
    OddBytes(usize),
}

/// How an SSE stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// All events are sent, then the body ends normally.
    Complete,
    /// The first `k` events are sent, then the connection is aborted (no
    /// terminating chunk, so the client sees a broken body).
    DropAfter(usize),
    /// The first `k` events are sent, then nothing for an hour (or until the
    /// `MockModel` is dropped).
    StallAfter(usize),
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum MockResponse {
    /// A `text/event-stream` of Responses API events.
    Sse {
        events: Vec<Value>,
        chunking: Chunking,
        end: StreamEnd,
    },
    /// A plain HTTP response (errors, rate limits, ...).
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Bytes sent as-is with `content-type: text/event-stream`.
    Raw { body: String },
    /// A stream that never completes (until the client goes away).
    Endless(Endless),
}

/// What a never-ending stream sends, after `response.created` and an opened message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endless {
    /// Text deltas of `delta_bytes` each, as fast as the client reads them.
    TextDeltas { delta_bytes: usize },
    /// A `keepalive` event every `every_ms`, and nothing else: never idle, never done.
    KeepAlive { every_ms: u64 },
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A process-unique suffix for generated response/item ids.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl MockResponse {
    /// A complete SSE stream of `events`, one write per event.
    pub fn sse(events: Vec<Value>) -> Self {
        MockResponse::Sse {
            events,
            chunking: Chunking::Whole,
            end: StreamEnd::Complete,
        }
    }

    /// A plain HTTP response; `content-type: application/json` is added when
    /// the body looks like JSON and no content type was given.
    pub fn http(status: u16, body: impl Into<String>) -> Self {
        MockResponse::Http {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// Bytes sent verbatim as an event stream.
    pub fn raw(body: impl Into<String>) -> Self {
        MockResponse::Raw { body: body.into() }
    }

    /// A message whose text deltas never stop.
    pub fn endless_deltas(delta_bytes: usize) -> Self {
        MockResponse::Endless(Endless::TextDeltas { delta_bytes })
    }

    /// Keep-alive events forever, every `every_ms`.
    pub fn endless_keepalive(every_ms: u64) -> Self {
        MockResponse::Endless(Endless::KeepAlive { every_ms })
    }

    /// A short assistant answer: created, message added, a few text deltas,
    /// message done, completed (with some usage).
    pub fn text(text: &str) -> Self {
        let deltas = split_text(text, 3);
        Self::text_from_deltas(text, &deltas)
    }

    /// Like [`MockResponse::text`] but with the given deltas (joined they form
    /// the final message text).
    pub fn text_from_deltas(text: &str, deltas: &[String]) -> Self {
        let n = next_id();
        let resp_id = format!("resp_mock_{n}");
        let msg_id = format!("msg_mock_{n}");
        let mut evs = vec![
            events::created(&resp_id),
            events::message_item_added(&msg_id),
        ];
        evs.extend(deltas.iter().map(|d| events::output_text_delta(&msg_id, d)));
        evs.push(events::assistant_message_done(&msg_id, text));
        let output_tokens = (text.len() as u64 / 4).max(1);
        evs.push(events::completed(&resp_id, 100, 0, output_tokens, 0));
        Self::sse(evs)
    }

    /// Function calls `(call_id, name, arguments_json)`: created, one
    /// `output_item.done` per call, completed.
    pub fn tool_calls<C, N, A>(calls: Vec<(C, N, A)>) -> Self
    where
        C: AsRef<str>,
        N: AsRef<str>,
        A: AsRef<str>,
    {
        let resp_id = format!("resp_mock_{}", next_id());
        let mut evs = vec![events::created(&resp_id)];
        for (i, (call_id, name, args)) in calls.iter().enumerate() {
            let done = events::function_call_done(call_id.as_ref(), name.as_ref(), args.as_ref());
            evs.push(events::with_output_index(done, i));
        }
        evs.push(events::completed(&resp_id, 100, 0, 20, 0));
        Self::sse(evs)
    }

    /// One call to the `shell` tool with `{"command": argv}`.
    pub fn shell(call_id: &str, argv: &[&str]) -> Self {
        let args = json!({ "command": argv }).to_string();
        Self::tool_calls(vec![(call_id, "shell", args)])
    }

    /// 429 with `Retry-After: <secs>` and a `rate_limit_exceeded` error body.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::http(
            429,
            error_body("rate_limit_exceeded", "Rate limit reached", "requests"),
        )
        .with_header("retry-after", &retry_after_secs.to_string())
    }

    /// 429 with an `insufficient_quota` error body (not retryable).
    pub fn insufficient_quota() -> Self {
        Self::http(
            429,
            error_body(
                "insufficient_quota",
                "You exceeded your current quota",
                "insufficient_quota",
            ),
        )
    }

    /// 400 with a `context_length_exceeded` error body.
    pub fn context_length_exceeded() -> Self {
        Self::http(
            400,
            error_body(
                "context_length_exceeded",
                "Your input exceeds the context window of this model.",
                "invalid_request_error",
            ),
        )
    }

    /// 500 with a `server_error` body.
    pub fn server_error() -> Self {
        Self::http(
            500,
            error_body("server_error", "mock internal error", "server_error"),
        )
    }

    /// Adds a response header (only meaningful for [`MockResponse::Http`]).
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let MockResponse::Http { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// Sets the chunking of an SSE stream.
    pub fn chunked(mut self, new: Chunking) -> Self {
        if let MockResponse::Sse { chunking, .. } = &mut self {
            *chunking = new;
        }
        self
    }

    /// Splits an SSE stream into writes of `n` bytes.
    pub fn odd_bytes(self, n: usize) -> Self {
        self.chunked(Chunking::OddBytes(n))
    }

    /// Sets how an SSE stream ends.
    pub fn ending(mut self, new: StreamEnd) -> Self {
        if let MockResponse::Sse { end, .. } = &mut self {
            *end = new;
        }
        self
    }

    /// Sends the first `k` events, then aborts the connection.
    pub fn drop_after(self, k: usize) -> Self {
        self.ending(StreamEnd::DropAfter(k))
    }

    /// Sends the first `k` events, then stalls.
    pub fn stall_after(self, k: usize) -> Self {
        self.ending(StreamEnd::StallAfter(k))
    }
}

/// The JSON error body the API sends with non-2xx statuses.
pub fn error_body(code: &str, message: &str, kind: &str) -> String {
    json!({"error": {"code": code, "message": message, "type": kind}}).to_string()
}

/// One SSE frame: `event: <type>\ndata: <json>\n\n` (no `event:` line when
/// the value has no string `type`).
pub fn encode_event(event: &Value) -> String {
    match event.get("type").and_then(Value::as_str) {
        Some(kind) => format!("event: {kind}\ndata: {event}\n\n"),
        None => format!("data: {event}\n\n"),
    }
}

/// Splits `text` into at most `parts` non-empty pieces on char boundaries.
pub fn split_text(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let parts = parts.clamp(1, chars.len());
    let base = chars.len() / parts;
    let extra = chars.len() % parts;
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for i in 0..parts {
        let len = base + usize::from(i < extra);
        out.push(chars[start..start + len].iter().collect());
        start += len;
    }
    out
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
