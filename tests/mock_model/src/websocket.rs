//! The mock's Responses-over-WebSocket endpoint (`GET …/responses` with an upgrade): each
//! `response.create` message pops the next scripted answer (or the auto answer) and gets its
//! events back as text messages. Faults map as on SSE: `DropAfter(k)` sends `k` events and
//! drops the connection without a close frame, `StallAfter(k)` goes silent, an HTTP answer
//! becomes an `error` event with its `status` (and `retry-after`), `Raw` sends the `data:`
//! lines of its body.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use futures::SinkExt;
use serde_json::{json, Value};

use crate::log::LogLine;
use crate::response::{MockResponse, StreamEnd};
use crate::wire::{lock, RecordedRequest, Shared};

/// Upgrades the connection and serves requests on it until the client goes away.
pub(crate) async fn upgrade(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let path = uri.path().to_owned();
    shared.connections.fetch_add(1, Ordering::Relaxed);
    ws.on_upgrade(move |socket| serve(socket, shared, path, headers))
}

async fn serve(
    mut socket: WebSocket,
    shared: Arc<Shared>,
    path: String,
    headers: Vec<(String, String)>,
) {
    while let Some(Ok(message)) = socket.recv().await {
        let Message::Text(text) = message else {
            continue;
        };
        let body: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
        let n = shared.count.fetch_add(1, Ordering::Relaxed) + 1;
        // Logged as method WEBSOCKET, without byte times (written when the answer is sent).
        let method = Method::from_bytes(b"WEBSOCKET").unwrap_or(Method::GET);
        let line = LogLine::start(&shared, n, &method, &path, &body);
        let scripted = lock(&shared.script).pop_front();
        let answer = scripted.or_else(|| shared.auto_answer(&body));
        if shared.record {
            lock(&shared.requests).push(RecordedRequest {
                method: "WEBSOCKET".into(),
                path: path.clone(),
                headers: headers.clone(),
                body,
            });
        }
        let answer = answer.unwrap_or_else(|| {
            MockResponse::http(500, r#"{"error":{"message":"mock script exhausted"}}"#)
        });
        let sent = send_answer(&mut socket, answer).await;
        drop(line);
        if !sent {
            return; // dropped on purpose, or the client went away
        }
    }
}

/// Sends one answer; false when the connection is to be (or was) dropped.
async fn send_answer(socket: &mut WebSocket, answer: MockResponse) -> bool {
    let text = |value: &Value| Message::Text(value.to_string().into());
    match answer {
        MockResponse::Sse { events, end, .. } => {
            let sent = match end {
                StreamEnd::Complete => events.len(),
                StreamEnd::DropAfter(k) | StreamEnd::StallAfter(k) => k.min(events.len()),
            };
            // Queued, then written together, as hyper writes the SSE body's ready chunks:
            // a flush per event would cost the mock (and the client) a write and a wake-up
            // per event that the SSE side does not pay, and the benchmark would measure that.
            for event in &events[..sent] {
                if socket.feed(text(event)).await.is_err() {
                    return false;
                }
            }
            if socket.flush().await.is_err() {
                return false;
            }
            match end {
                StreamEnd::Complete => true,
                // Dropping the socket ends the TCP connection without a close frame.
                StreamEnd::DropAfter(_) => false,
                StreamEnd::StallAfter(_) => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    false
                }
            }
        }
        MockResponse::Http {
            status,
            headers,
            body,
        } => {
            let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let headers: serde_json::Map<String, Value> = headers
                .into_iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), Value::from(v)))
                .collect();
            let event = json!({
                "type": "error",
                "status": status,
                "error": parsed.get("error").cloned().unwrap_or(Value::from(body)),
                "headers": headers,
            });
            socket.send(text(&event)).await.is_ok()
        }
        MockResponse::Raw { body } => {
            for line in body.lines() {
                if let Some(data) = line.strip_prefix("data:") {
                    if socket
                        .send(Message::Text(data.trim().to_owned().into()))
                        .await
                        .is_err()
                    {
                        return false;
                    }
                }
            }
            true
        }
        MockResponse::Endless(_) => loop {
            let keepalive = json!({"type": "keepalive"});
            if socket.send(text(&keepalive)).await.is_err() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        },
    }
}
