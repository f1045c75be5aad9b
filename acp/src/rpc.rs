//! JSON-RPC 2.0 as ACP frames it: one JSON object per line on stdin and stdout.
//!
//! Everything Troupe writes goes through one bounded queue drained by a writer task, so a
//! client that stops reading never blocks a session: `session/update` notifications are
//! dropped (and counted) once the queue is full, responses and requests wait for room.

use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's "resource not found" (an unknown session).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A line from the client longer than this is skipped without being held in memory.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// Lines queued for the client before updates are dropped.
pub const OUTBOUND_CAPACITY: usize = 4096;
/// How long a response or request waits for room in a full queue before it is given up.
const SEND_WAIT: Duration = Duration::from_secs(30);

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }
}

/// One line from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    Response {
        id: Value,
        outcome: Result<Value, RpcError>,
    },
}

/// Reads one line; the error carries the id to answer with (`null` when there is none).
pub fn parse_line(line: &str) -> Result<Incoming, (Value, RpcError)> {
    let value: Value = serde_json::from_str(line).map_err(|err| {
        (
            Value::Null,
            RpcError::new(PARSE_ERROR, format!("Parse error: {err}")),
        )
    })?;
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            RpcError::new(INVALID_REQUEST, "Invalid request: not a JSON object"),
        ));
    };
    let id = object.remove("id");
    if let Some(id) = &id {
        if !(id.is_string() || id.is_number() || id.is_null()) {
            return Err((
                Value::Null,
                RpcError::new(
                    INVALID_REQUEST,
                    "Invalid request: id must be a string or a number",
                ),
            ));
        }
    }
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(_), id) => Err((
            id.unwrap_or(Value::Null),
            RpcError::new(INVALID_REQUEST, "Invalid request: method must be a string"),
        )),
        (None, Some(id)) => {
            let outcome = match (object.remove("result"), object.remove("error")) {
                (_, Some(error)) => Err(RpcError::new(
                    error
                        .get("code")
                        .and_then(Value::as_i64)
                        .unwrap_or(INTERNAL_ERROR),
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                )),
                (Some(result), None) => Ok(result),
                (None, None) => {
                    return Err((
                        id,
                        RpcError::new(
                            INVALID_REQUEST,
                            "Invalid request: no method, result or error",
                        ),
                    ))
                }
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, None) => Err((
            Value::Null,
            RpcError::new(INVALID_REQUEST, "Invalid request: no method"),
        )),
    }
}

/// One line read with a bound: the line, or `TooLong` once the rest of an oversized line was
/// skipped; `None` at the end of the input.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadLine {
    Line(String),
    TooLong,
}

pub async fn read_line(
    input: &mut (impl tokio::io::AsyncBufRead + Unpin),
) -> std::io::Result<Option<ReadLine>> {
    use tokio::io::AsyncBufReadExt;
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Some(ReadLine::TooLong),
                (false, true) => None,
                (false, false) => Some(ReadLine::Line(String::from_utf8_lossy(&line).into_owned())),
            });
        }
        let (taken, done) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if !too_long {
            let end = if done { taken - 1 } else { taken };
            line.extend_from_slice(&available[..end]);
            if line.len() > MAX_LINE_BYTES {
                too_long = true;
                line = Vec::new();
            }
        }
        input.consume(taken);
        if done {
            return Ok(Some(if too_long {
                ReadLine::TooLong
            } else {
                ReadLine::Line(String::from_utf8_lossy(&line).into_owned())
            }));
        }
    }
}

/// The line of a response.
pub fn response_line(id: &Value, outcome: &Result<Value, RpcError>) -> String {
    let message = match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    };
    message.to_string()
}

/// Troupe's side of the connection: writes to the client, and the requests it awaits.
pub struct Peer {
    out: mpsc::Sender<String>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
    dropped: AtomicU64,
}

impl Peer {
    /// A peer writing to `sink` from a task of its own.
    pub fn spawn(sink: impl AsyncWrite + Unpin + Send + 'static) -> std::sync::Arc<Self> {
        let (out, lines) = mpsc::channel(OUTBOUND_CAPACITY);
        tokio::spawn(write_lines(sink, lines));
        std::sync::Arc::new(Self {
            out,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        })
    }

    /// Answers a request (waits for room in the queue, up to a deadline).
    pub async fn respond(&self, id: &Value, outcome: Result<Value, RpcError>) {
        self.send(response_line(id, &outcome)).await;
    }

    /// A `session/update` (or another notification that may be lost): queued if there is
    /// room, else dropped and counted, so a client that stops reading never holds a session.
    pub fn notify(&self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        if self.out.try_send(line).is_err() {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(
                    dropped,
                    "the client is not reading: session updates dropped"
                );
            }
        }
    }

    /// Sends a request to the client and waits for its answer (an error if the client goes
    /// away or the line cannot be queued).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        let line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        if !self.send(line).await {
            self.forget(id);
            return Err(RpcError::internal("the client is not reading"));
        }
        rx.await
            .unwrap_or_else(|_| Err(RpcError::internal("the client went away")))
    }

    /// The client answered one of our requests; `false` when no request has that id.
    pub fn resolve(&self, id: &Value, outcome: Result<Value, RpcError>) -> bool {
        let Some(id) = id.as_u64() else {
            return false;
        };
        let waiter = self.pending.lock().ok().and_then(|mut p| p.remove(&id));
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(outcome);
                true
            }
            None => false,
        }
    }

    fn forget(&self, id: u64) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(&id);
        }
    }

    async fn send(&self, line: String) -> bool {
        matches!(
            tokio::time::timeout(SEND_WAIT, self.out.send(line)).await,
            Ok(Ok(()))
        )
    }
}

async fn write_lines(mut sink: impl AsyncWrite + Unpin, mut lines: mpsc::Receiver<String>) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if sink.write_all(line.as_bytes()).await.is_err() || sink.flush().await.is_err() {
            // The client closed its end: nothing more can reach it.
            break;
        }
    }
}

#[cfg(test)]
#[path = "rpc_tests.rs"]
mod tests;
