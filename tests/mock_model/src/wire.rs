//! Turning a request into bytes on the wire.
//!
//! Holds the shared server state (script queue, recorded requests, log) and
//! the single axum handler, and renders each [`MockResponse`] variant into an
//! HTTP response whose body stream reproduces the scripted timing: odd-sized
//! chunks, aborted connections and stalls.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::Value;

use crate::auto::{self, AutoConfig};
use crate::events;
use crate::log::LogLine;
use crate::response::{error_body, next_id, Chunking, Endless, MockResponse, StreamEnd};
use crate::translate::{self, Wire};

/// How long a `StallAfter` stream stays silent before giving up.
const STALL: Duration = Duration::from_secs(3600);
/// Pause between `OddBytes` chunks so they leave as separate writes.
const CHUNK_PAUSE: Duration = Duration::from_millis(1);
/// Pause before aborting a `DropAfter` stream so the sent events are flushed.
const DROP_PAUSE: Duration = Duration::from_millis(20);

/// One request as the mock received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Request path, e.g. `/v1/responses`.
    pub path: String,
    /// Headers with lowercased names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; a JSON string of the raw text if it is not
    /// JSON; `null` if empty.
    pub body: Value,
}

impl RecordedRequest {
    /// First value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body's `input` array (empty if absent).
    pub fn input(&self) -> &[Value] {
        self.body
            .get("input")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Tool outputs already in `input` (what auto mode counts).
    pub fn tool_output_count(&self) -> usize {
        auto::count_tool_outputs(&self.body)
    }
}

/// State shared by all connections of one server.
pub(crate) struct Shared {
    pub(crate) script: Mutex<VecDeque<MockResponse>>,
    /// Scripts of other conversations (sub-agents), each chosen by a key that appears in
    /// the request's last user message; see [`crate::MockModel::route`].
    pub(crate) routes: Mutex<Vec<(String, VecDeque<MockResponse>)>>,
    pub(crate) requests: Mutex<Vec<RecordedRequest>>,
    pub(crate) count: AtomicU64,
    pub(crate) auto: Option<AutoConfig>,
    pub(crate) record: bool,
    pub(crate) log: Option<Mutex<File>>,
    /// WebSocket connections accepted.
    pub(crate) connections: AtomicU64,
    /// Children of the multi-agent scenario ([`crate::multi_agent`]); 0 when not in it.
    pub(crate) agents: usize,
}

impl Shared {
    /// The stateless answer of auto mode (or of the multi-agent scenario), if in it.
    pub(crate) fn auto_answer(&self, body: &Value) -> Option<MockResponse> {
        let cfg = self.auto.as_ref()?;
        Some(if self.agents > 0 {
            crate::multi_agent::respond(cfg, self.agents, body)
        } else {
            auto::respond(cfg, body)
        })
    }
}

/// The text of the last user message in a request's `input`.
pub fn last_user_text(body: &Value) -> String {
    let input = body.get("input").and_then(Value::as_array);
    let Some(message) = input.into_iter().flatten().rev().find(|item| {
        item.get("type").and_then(Value::as_str) == Some("message")
            && item.get("role").and_then(Value::as_str) == Some("user")
    }) else {
        return String::new();
    };
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("")
}

/// The routed answer for a request: `Some(next)` when a route's key is in the last user
/// message (`Some(None)` once that route is exhausted), `None` for the default script.
fn route_of(shared: &Shared, body: &Value) -> Option<Option<MockResponse>> {
    let text = last_user_text(body);
    let mut routes = lock(&shared.routes);
    routes
        .iter_mut()
        .find(|(key, _)| text.contains(key.as_str()))
        .map(|(_, script)| script.pop_front())
}

/// Locks ignoring poisoning: the data stays usable for a test mock.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The only handler: records every request and answers `…/responses`.
pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let n = shared.count.fetch_add(1, Ordering::Relaxed) + 1;
    let body = parse_body(&body);
    let path = uri.path().to_owned();
    let line = LogLine::start(&shared, n, &method, &path, &body);
    let wire = wire_of(&method, &path);
    let is_models = method == Method::GET && path.trim_end_matches('/').ends_with("/models");
    // Sub-agent scripts are routed by a key in the last user message (Responses wire only).
    let routed = if wire == Some(Wire::Responses) {
        route_of(&shared, &body)
    } else {
        None
    };
    let was_routed = routed.is_some();
    let answer = match (routed, wire) {
        (Some(route), _) => route,
        (None, Some(_)) => {
            let scripted = lock(&shared.script).pop_front();
            scripted.or_else(|| shared.auto_answer(&body))
        }
        (None, None) => None,
    };
    if shared.record {
        let headers = headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        lock(&shared.requests).push(RecordedRequest {
            method: method.to_string(),
            path,
            headers,
            body,
        });
    }
    match (answer, wire) {
        (Some(r), Some(wire)) => render_on(r, wire, line),
        _ if is_models => http_response(200, &[], models_body()),
        (None, Some(_)) if was_routed => http_response(
            500,
            &[],
            error_body_without_code("mock route script exhausted", "server_error"),
        ),
        (None, Some(_)) => http_response(
            500,
            &[],
            error_body_without_code("mock script exhausted", "server_error"),
        ),
        _ => http_response(
            404,
            &[],
            error_body("not_found", "mock: unknown path", "invalid_request_error"),
        ),
    }
}

/// Which wire a request speaks, from its path; `None` for anything else.
pub(crate) fn wire_of(method: &Method, path: &str) -> Option<Wire> {
    if method != Method::POST {
        return None;
    }
    let path = path.trim_end_matches('/');
    if path.ends_with("/responses") {
        Some(Wire::Responses)
    } else if path.ends_with("/chat/completions") {
        Some(Wire::Chat)
    } else if path.ends_with("/messages") {
        Some(Wire::Anthropic)
    } else {
        None
    }
}

/// `GET …/models`: the models the mock pretends to serve (OpenAI list shape).
fn models_body() -> String {
    let data: Vec<Value> = MODELS
        .iter()
        .map(|id| serde_json::json!({"id": id, "object": "model", "owned_by": "mock"}))
        .collect();
    serde_json::json!({"object": "list", "data": data}).to_string()
}

/// What `GET …/models` lists.
pub const MODELS: &[&str] = &["mock-model", "gpt-oss:20b", "qwen3-coder:30b"];

fn error_body_without_code(message: &str, kind: &str) -> String {
    serde_json::json!({"error": {"message": message, "type": kind}}).to_string()
}

fn parse_body(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// Renders one scripted answer in `wire`'s format, completing its log line (if any) as a
/// streamed body goes out (other bodies log no byte times: `line` is dropped here).
pub(crate) fn render_on(resp: MockResponse, wire: Wire, line: Option<LogLine>) -> Response {
    match resp {
        MockResponse::Http {
            status,
            headers,
            body,
        } => http_response(status, &headers, body),
        MockResponse::Raw { body } => sse_response(Body::from(body)),
        MockResponse::Endless(kind) => {
            sse_response(Body::from_stream(endless_stream_on(kind, wire)))
        }
        MockResponse::Sse {
            events,
            chunking,
            end,
        } => sse_response(Body::from_stream(sse_stream_on(
            wire, &events, chunking, end, line,
        ))),
    }
}

type Chunk = Result<Bytes, io::Error>;

/// The body stream of an SSE answer. With a log `line`, records when its first and last
/// chunks are handed over, and yields once after the first chunk so that the HTTP stack
/// flushes it instead of buffering more chunks first.
#[cfg(test)]
pub(crate) fn sse_stream(
    events: &[Value],
    chunking: Chunking,
    end: StreamEnd,
    line: Option<LogLine>,
) -> BoxStream<'static, Chunk> {
    sse_stream_on(Wire::Responses, events, chunking, end, line)
}

/// [`sse_stream`] in a given wire's format; a cut after `k` events is cut after the frames
/// of the first `k` source events.
pub(crate) fn sse_stream_on(
    wire: Wire,
    events: &[Value],
    chunking: Chunking,
    end: StreamEnd,
    line: Option<LogLine>,
) -> BoxStream<'static, Chunk> {
    let sent = match end {
        StreamEnd::Complete => events.len(),
        StreamEnd::DropAfter(k) | StreamEnd::StallAfter(k) => k.min(events.len()),
    };
    let frames: Vec<String> = translate::frames(wire, &events[..sent], events)
        .into_iter()
        .map(|frames| frames.concat())
        .filter(|frame| !frame.is_empty())
        .collect();
    let (chunks, pause) = match chunking {
        Chunking::Whole => (frames.into_iter().map(Bytes::from).collect(), false),
        Chunking::OddBytes(n) => (odd_chunks(frames.concat().into_bytes(), n), true),
    };
    let count = chunks.len();
    // Dropped (and so written, without byte times) if there is nothing to send.
    let line = line.filter(|_| count > 0).map(|l| Arc::new(Mutex::new(l)));
    let body = stream::iter(chunks.into_iter().enumerate()).then(move |(i, chunk)| {
        let line = line.clone();
        async move {
            if pause {
                tokio::time::sleep(CHUNK_PAUSE).await;
            }
            if let Some(line) = line {
                if i == 1 {
                    tokio::task::yield_now().await;
                }
                lock(&line).chunk(chunk.len(), i + 1 == count);
            }
            Ok::<_, io::Error>(chunk)
        }
    });
    let tail: BoxStream<'static, Chunk> = match end {
        StreamEnd::Complete => stream::empty().boxed(),
        StreamEnd::DropAfter(_) => stream::once(async {
            tokio::time::sleep(DROP_PAUSE).await;
            Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "mock: stream dropped",
            ))
        })
        .boxed(),
        StreamEnd::StallAfter(_) => stream::once(async {
            tokio::time::sleep(STALL).await;
            Err(io::Error::new(io::ErrorKind::TimedOut, "mock: stall ended"))
        })
        .boxed(),
    };
    body.chain(tail).boxed()
}

/// The body of a stream that never completes: `response.created`, an opened message, then
/// deltas or keep-alives until the client disconnects (the server then drops the stream).
pub(crate) fn endless_stream_on(kind: Endless, wire: Wire) -> BoxStream<'static, Chunk> {
    let n = next_id();
    let (resp_id, msg_id) = (format!("resp_endless_{n}"), format!("msg_endless_{n}"));
    let head_events = [
        events::created(&resp_id),
        events::message_item_added(&msg_id),
    ];
    let head = translate::frames(wire, &head_events, &head_events)
        .into_iter()
        .map(|frames| Ok(Bytes::from(frames.concat())))
        .collect::<Vec<Chunk>>();
    let repeated = match kind {
        Endless::TextDeltas { delta_bytes } => {
            events::output_text_delta(&msg_id, &"z".repeat(delta_bytes.max(1)))
        }
        Endless::KeepAlive { .. } => serde_json::json!({"type": "keepalive"}),
    };
    let frame = translate::frames(wire, std::slice::from_ref(&repeated), &[])
        .concat()
        .concat();
    let frame = Bytes::from(frame);
    let tail = stream::repeat(frame).then(move |frame| async move {
        match kind {
            Endless::TextDeltas { .. } => tokio::task::yield_now().await,
            Endless::KeepAlive { every_ms } => {
                tokio::time::sleep(Duration::from_millis(every_ms)).await;
            }
        }
        Ok::<_, io::Error>(frame)
    });
    stream::iter(head).chain(tail).boxed()
}

/// Cuts `bytes` into pieces of `n` bytes (the last may be shorter).
pub(crate) fn odd_chunks(bytes: Vec<u8>, n: usize) -> Vec<Bytes> {
    let all = Bytes::from(bytes);
    let n = n.max(1);
    (0..all.len())
        .step_by(n)
        .map(|start| all.slice(start..(start + n).min(all.len())))
        .collect()
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(body)
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn http_response(status: u16, headers: &[(String, String)], body: String) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    let has_type = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
    if !has_type && body.trim_start().starts_with('{') {
        builder = builder.header("content-type", "application/json");
    }
    for (k, v) in headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    builder.body(Body::from(body)).unwrap_or_else(|_| {
        let mut fallback = Response::new(Body::from("mock: invalid scripted header"));
        *fallback.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
