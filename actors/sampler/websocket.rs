//! Responses over WebSocket (`supports_websockets = true`): the request goes as one
//! `response.create` message and the events come back as text messages with the same JSON
//! as the SSE events. The connection belongs to the turn's sampler and is reused by every
//! request of the turn (no new TCP/TLS handshake and HTTP request per tool call); it is kept
//! only after a request completed cleanly, so a dropped or failed response never leaves
//! stray events for the next one. When the upgrade fails the turn falls back to SSE.

use super::client::{apply, classify_status, AttemptError, Budget};
use super::retry::parse_retry_after;
use super::wire::WireDecoder;
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use troupe_messages::errors::ModelError;
use troupe_messages::items::ResponseItem;
use troupe_messages::sampling::SamplerUpdate;
use troupe_messages::settings::ProviderSettings;
use troupe_messages::usage::TokenUsage;

/// `OpenAI-Beta` value of the WebSocket handshake.
pub const RESPONSES_WEBSOCKETS_BETA: &str = "responses_websockets=2026-02-06";

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// The turn's WebSocket: idle between requests, or absent; and whether it is given up on.
#[derive(Default)]
pub struct WsSlot {
    socket: tokio::sync::Mutex<Option<Socket>>,
    disabled: AtomicBool,
    /// Connections opened, for tests and diagnostics.
    opened: std::sync::atomic::AtomicU64,
}

impl WsSlot {
    pub fn enabled(&self) -> bool {
        !self.disabled.load(Ordering::Relaxed)
    }

    /// How many connections this slot opened.
    pub fn connections_opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }
}

/// What a WebSocket attempt came to.
pub(super) enum WsAttempt {
    Done(Result<(Vec<ResponseItem>, TokenUsage), AttemptError>),
    /// No WebSocket (the upgrade failed, now or earlier in the turn): use SSE.
    NotTried(Box<dyn WireDecoder>),
}

/// `ws://…/responses` from an `http://…` base URL (`wss` from `https`).
pub fn websocket_url(base_url: &str) -> String {
    let url = if let Some(rest) = base_url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = base_url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        base_url.to_string()
    };
    format!("{url}/responses")
}

async fn connect(provider: &ProviderSettings, key: Option<&str>) -> Result<Socket, String> {
    let url = websocket_url(&provider.base_url);
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|err| format!("bad WebSocket URL {url}: {err}"))?;
    let headers = request.headers_mut();
    let mut add = |name: &str, value: &str| -> Result<(), String> {
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("header `{name}` holds characters a header cannot"))?;
        let name = tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("`{name}` is not a header name"))?;
        headers.insert(name, value);
        Ok(())
    };
    add("openai-beta", RESPONSES_WEBSOCKETS_BETA)?;
    if let Some(key) = key {
        add("authorization", &format!("Bearer {key}"))?;
    }
    for (name, value) in &provider.http_headers {
        add(name, value)?;
    }
    let timeout = Duration::from_millis(provider.request_timeout_ms);
    // Nagle off, as reqwest has it for SSE: a request is one small write that must leave at
    // once, not wait for the ACK of the previous one.
    let connect = tokio_tungstenite::connect_async_with_config(request, None, true);
    match tokio::time::timeout(timeout, connect).await {
        Err(_) => Err(format!("no WebSocket handshake within {timeout:?}")),
        // The error names the URL and status, never the request's headers.
        Ok(Err(err)) => Err(format!("WebSocket upgrade at {url} failed: {err}")),
        Ok(Ok((socket, _))) => Ok(socket),
    }
}

/// One request over the turn's WebSocket (connecting first if there is none).
pub(super) async fn attempt(
    slot: &WsSlot,
    provider: &ProviderSettings,
    key: Option<&str>,
    body: &Value,
    decoder: Box<dyn WireDecoder>,
    on_update: &mut impl FnMut(SamplerUpdate),
) -> WsAttempt {
    let mut idle_socket = slot.socket.lock().await;
    let mut socket = match idle_socket.take() {
        Some(socket) => socket,
        None => match connect(provider, key).await {
            Ok(socket) => {
                slot.opened.fetch_add(1, Ordering::Relaxed);
                socket
            }
            Err(reason) => {
                tracing::warn!(%reason, "falling back to SSE for the rest of the turn");
                slot.disabled.store(true, Ordering::Relaxed);
                return WsAttempt::NotTried(decoder);
            }
        },
    };
    let message = match create_message(body) {
        Ok(message) => message,
        Err(err) => {
            return WsAttempt::Done(Err(AttemptError::Fatal(ModelError::Internal {
                message: format!("the request cannot be encoded: {err}"),
            })))
        }
    };
    if let Err(err) = socket.send(Message::text(message)).await {
        return WsAttempt::Done(Err(stream_error(format!(
            "the WebSocket failed while sending the request: {err}"
        ))));
    }
    let outcome = read_events(&mut socket, provider, decoder, on_update).await;
    if outcome.is_ok() {
        // Clean end of a response: the next request of the turn reuses the connection.
        *idle_socket = Some(socket);
    }
    WsAttempt::Done(outcome)
}

/// The `response.create` message: the request body without `stream`, serialized once
/// straight from the body (no copy of the whole history first).
fn create_message(body: &Value) -> Result<String, serde_json::Error> {
    struct Create<'a>(&'a serde_json::Map<String, Value>);
    impl serde::Serialize for Create<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("type", "response.create")?;
            for (key, value) in self.0 {
                if key != "stream" && key != "type" {
                    map.serialize_entry(key, value)?;
                }
            }
            map.end()
        }
    }
    match body.as_object() {
        Some(object) => serde_json::to_string(&Create(object)),
        None => serde_json::to_string(body),
    }
}

fn stream_error(reason: String) -> AttemptError {
    AttemptError::Retryable {
        budget: Budget::Stream,
        reason,
        retry_after: None,
    }
}

/// Reads events until the response completes, with the same bounds as an SSE stream.
async fn read_events(
    socket: &mut Socket,
    provider: &ProviderSettings,
    mut decoder: Box<dyn WireDecoder>,
    on_update: &mut impl FnMut(SamplerUpdate),
) -> Result<(Vec<ResponseItem>, TokenUsage), AttemptError> {
    let idle = Duration::from_millis(provider.stream_idle_timeout_ms);
    let deadline =
        tokio::time::Instant::now() + Duration::from_millis(provider.stream_max_duration_ms);
    let mut received = 0u64;
    let mut items = Vec::new();
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(stream_error(format!(
                "the response took longer than {} ms (stream_max_duration_ms)",
                provider.stream_max_duration_ms
            )));
        }
        let text = match tokio::time::timeout(idle.min(deadline - now), socket.next()).await {
            Err(_) => {
                return Err(stream_error(format!(
                    "idle timeout: no data from the model for {} ms",
                    idle.as_millis()
                )))
            }
            Ok(None) | Ok(Some(Ok(Message::Close(_)))) => {
                return Err(stream_error(
                    "the WebSocket closed before the response completed".into(),
                ))
            }
            Ok(Some(Err(err))) => return Err(stream_error(format!("WebSocket error: {err}"))),
            Ok(Some(Ok(Message::Text(text)))) => text,
            Ok(Some(Ok(_))) => continue, // ping, pong, binary
        };
        received = received.saturating_add(text.len() as u64);
        if received > provider.stream_max_bytes {
            return Err(stream_error(format!(
                "the response exceeded {} bytes (stream_max_bytes)",
                provider.stream_max_bytes
            )));
        }
        if let Some(failure) = status_error(&text) {
            return Err(failure);
        }
        match decoder.event("", &text) {
            Ok(events) => {
                if let Some(done) = apply(events, &mut items, on_update) {
                    return done;
                }
            }
            Err(bad) => tracing::warn!(reason = %bad.0, "skipped a WebSocket event"),
        }
    }
}

/// An `error` event carrying an HTTP `status` (how the WebSocket reports what SSE would as
/// an HTTP error: 429, 5xx, 401…), classified as that status.
fn status_error(text: &str) -> Option<AttemptError> {
    // Most events carry a `status` too (`response.completed`'s response has one): look at
    // the type first, without building the event, so only an error is parsed whole.
    #[derive(serde::Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    if !text.contains("\"status\"") {
        return None;
    }
    let kind: Kind = serde_json::from_str(text).ok()?;
    if kind.kind.as_deref() != Some("error") {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let status = u16::try_from(value.get("status")?.as_u64()?).ok()?;
    let retry_after = parse_retry_after(
        value
            .pointer("/headers/retry-after")
            .and_then(Value::as_str),
    );
    Some(classify_status(status, retry_after, &value, text))
}
