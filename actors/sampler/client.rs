//! One model request over the provider's wire (SSE), with the retry loop around it. The
//! wire (`wire.rs`) decides the path, body, credentials header and how events decode; the
//! transport, the bounds on a stream, retries and error classification are shared here.

use super::auth::{api_key, redact, redact_error};
use super::retry::{backoff, parse_retry_after, retryable_status};
use super::sse::{classify_code, StreamEvent};
use super::websocket::{self, WsAttempt, WsSlot};
use super::wire::{wire_for, Wire, WireDecoder};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use troupe_messages::errors::ModelError;
use troupe_messages::items::ResponseItem;
use troupe_messages::sampling::{ModelRequest, SamplerUpdate};
use troupe_messages::settings::ProviderSettings;
use troupe_messages::usage::TokenUsage;

pub use super::responses::request_body;

/// Which retry budget a failure draws on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Budget {
    Request,
    Stream,
}

/// How one attempt ended badly.
pub(super) enum AttemptError {
    Fatal(ModelError),
    Retryable {
        budget: Budget,
        reason: String,
        retry_after: Option<Duration>,
    },
}

/// Serves `request` to completion, calling `on_update` with deltas, retries and the result.
/// The API key comes from the provider's `env_key` variable or `auth_file`; every error and
/// retry reason is scrubbed of it before it leaves.
/// `ws`, when given, is the turn's WebSocket (Responses over WebSocket): used while it works,
/// SSE once an upgrade failed.
pub async fn sample(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    auth_file: &Path,
    ws: Option<&WsSlot>,
    request: &ModelRequest,
    mut on_update: impl FnMut(SamplerUpdate),
) {
    let key = match api_key(provider, auth_file) {
        Ok(key) => key,
        Err(err) => {
            on_update(SamplerUpdate::Failed {
                error: ModelError::Unauthorized {
                    status: 0,
                    message: err.to_string(),
                },
            });
            return;
        }
    };
    let key = key.as_deref();
    let wire = wire_for(provider.wire_api);
    let body = wire.body(request);
    let mut request_retries = 0u32;
    let mut stream_retries = 0u32;
    loop {
        let decoder = wire.decoder(request);
        let over_websocket = match ws.filter(|ws| ws.enabled()) {
            Some(ws) => websocket::attempt(ws, provider, key, &body, decoder, &mut on_update).await,
            None => WsAttempt::NotTried(decoder),
        };
        let outcome = match over_websocket {
            WsAttempt::Done(outcome) => outcome,
            WsAttempt::NotTried(decoder) => {
                attempt(
                    http,
                    provider,
                    wire.as_ref(),
                    key,
                    &body,
                    decoder,
                    &mut on_update,
                )
                .await
            }
        };
        let error = match outcome {
            Ok((items, usage)) => {
                on_update(SamplerUpdate::Completed { items, usage });
                return;
            }
            Err(error) => error,
        };
        let (budget, reason, retry_after) = match error {
            AttemptError::Fatal(error) => {
                on_update(SamplerUpdate::Failed {
                    error: redact_error(error, key),
                });
                return;
            }
            AttemptError::Retryable {
                budget,
                reason,
                retry_after,
            } => (budget, redact(&reason, key), retry_after),
        };
        let (used, max) = match budget {
            Budget::Request => (&mut request_retries, provider.request_max_retries),
            Budget::Stream => (&mut stream_retries, provider.stream_max_retries),
        };
        *used += 1;
        if *used > max {
            on_update(SamplerUpdate::Failed {
                error: ModelError::RetriesExhausted {
                    attempts: *used,
                    last: reason,
                },
            });
            return;
        }
        let delay = retry_after.unwrap_or_else(|| backoff(*used));
        on_update(SamplerUpdate::Retrying {
            attempt: *used,
            max_attempts: max,
            delay_ms: delay.as_millis() as u64,
            reason,
        });
        tokio::time::sleep(delay).await;
    }
}

async fn attempt(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    wire: &dyn Wire,
    key: Option<&str>,
    body: &Value,
    decoder: Box<dyn WireDecoder>,
    on_update: &mut impl FnMut(SamplerUpdate),
) -> Result<(Vec<ResponseItem>, TokenUsage), AttemptError> {
    let url = format!("{}{}", provider.base_url, wire.path());
    let mut builder = wire.headers(
        http.post(&url)
            .header("accept", "text/event-stream")
            .json(body),
    );
    if let Some(key) = key {
        builder = wire.authorize(builder, key);
    }
    for (name, value) in &provider.http_headers {
        builder = builder.header(name, value);
    }
    let timeout = Duration::from_millis(provider.request_timeout_ms);
    let response = match tokio::time::timeout(timeout, builder.send()).await {
        Err(_) => {
            return Err(retry_request(
                format!("no response within {timeout:?}"),
                None,
            ))
        }
        Ok(Err(err)) => {
            return Err(retry_request(
                format!("cannot reach {}: {}", provider.base_url, error_chain(&err)),
                None,
            ))
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        return Err(http_failure(response).await);
    }
    if let Some(kind) = not_a_stream(&response) {
        let page = read_some(response).await;
        return Err(AttemptError::Fatal(ModelError::ResponseFailed {
            message: format!(
                "{url} answered `{kind}` instead of an event stream (is base_url right, and \
                 does the server speak wire_api = \"{}\"?): {}",
                wire_name(provider),
                describe_body(&page)
            ),
        }));
    }
    read_stream(response, provider, decoder, on_update).await
}

fn wire_name(provider: &ProviderSettings) -> &'static str {
    match provider.wire_api {
        troupe_messages::settings::WireApi::Responses => "responses",
        troupe_messages::settings::WireApi::Chat => "chat",
        troupe_messages::settings::WireApi::Anthropic => "anthropic",
    }
}

/// The content type of a successful answer that cannot be a stream (an HTML page from a
/// proxy or a wrong URL, a non-streaming JSON body).
fn not_a_stream(response: &reqwest::Response) -> Option<String> {
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())?
        .to_ascii_lowercase();
    (kind.starts_with("text/html") || kind.starts_with("application/json")).then_some(kind)
}

async fn read_some(response: reqwest::Response) -> String {
    tokio::time::timeout(Duration::from_secs(10), response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
}

/// A short, readable account of an error body: an HTML page by its title, else the start.
fn describe_body(body: &str) -> String {
    let trimmed = body.trim_start();
    if trimmed.starts_with('<') {
        let lower = trimmed.to_ascii_lowercase();
        let title = lower
            .find("<title>")
            .and_then(|start| {
                let from = start + "<title>".len();
                lower[from..]
                    .find("</title>")
                    .map(|len| &trimmed[from..from + len])
            })
            .map(str::trim)
            .filter(|t| !t.is_empty());
        return match title {
            Some(title) => format!(
                "an HTML page titled \"{}\"",
                title.chars().take(200).collect::<String>()
            ),
            None => "an HTML page".to_string(),
        };
    }
    trimmed.chars().take(500).collect()
}

pub(super) fn retry_request(reason: String, retry_after: Option<Duration>) -> AttemptError {
    AttemptError::Retryable {
        budget: Budget::Request,
        reason,
        retry_after,
    }
}

async fn http_failure(response: reqwest::Response) -> AttemptError {
    let status = response.status().as_u16();
    let retry_after = parse_retry_after(
        response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
    );
    let body = read_some(response).await;
    let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    classify_status(status, retry_after, &parsed, &body)
}

/// A failed status (HTTP, or a WebSocket `error` event's `status`) with its error body.
pub(super) fn classify_status(
    status: u16,
    retry_after: Option<Duration>,
    parsed: &Value,
    body: &str,
) -> AttemptError {
    // OpenAI puts a `code`; Anthropic only a `type` (`overloaded_error`, …).
    let code = parsed
        .pointer("/error/code")
        .and_then(Value::as_str)
        .or_else(|| parsed.pointer("/error/type").and_then(Value::as_str))
        .unwrap_or("");
    let message = parsed
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| describe_body(body));
    if code == "context_length_exceeded"
        || code == "insufficient_quota"
        || message.contains("prompt is too long")
    {
        return AttemptError::Fatal(classify_code(code, message).0);
    }
    if status == 401 || status == 403 {
        return AttemptError::Fatal(ModelError::Unauthorized { status, message });
    }
    if retryable_status(status) {
        return retry_request(format!("HTTP {status}: {message}"), retry_after);
    }
    AttemptError::Fatal(ModelError::BadRequest { status, message })
}

/// Why reading a response body stopped short.
#[derive(Debug)]
enum BodyError {
    Transport(reqwest::Error),
    /// More than `stream_max_bytes` arrived.
    TooLarge(u64),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Transport(err) => write!(f, "{}", error_chain(err)),
            BodyError::TooLarge(max) => write!(
                f,
                "the response exceeded {max} bytes (stream_max_bytes); a model that never \
                 finishes is cut off"
            ),
        }
    }
}

/// Reads the SSE body until `response.completed`. Bounded three ways: an idle gap
/// (`stream_idle_timeout_ms`), total bytes on the wire (`stream_max_bytes`, counted before
/// SSE parsing, so one endless line is cut too) and total time (`stream_max_duration_ms`, so
/// keep-alives or deltas sent forever end). Each is a stream error, retried as such.
async fn read_stream(
    response: reqwest::Response,
    provider: &ProviderSettings,
    mut decoder: Box<dyn WireDecoder>,
    on_update: &mut impl FnMut(SamplerUpdate),
) -> Result<(Vec<ResponseItem>, TokenUsage), AttemptError> {
    let idle = Duration::from_millis(provider.stream_idle_timeout_ms);
    let max_duration = Duration::from_millis(provider.stream_max_duration_ms);
    let deadline = tokio::time::Instant::now() + max_duration;
    let max_bytes = provider.stream_max_bytes;
    let mut received = 0u64;
    let body = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(BodyError::Transport)?;
        received = received.saturating_add(chunk.len() as u64);
        if received > max_bytes {
            return Err(BodyError::TooLarge(max_bytes));
        }
        Ok(chunk)
    });
    let mut events = body.eventsource();
    let mut items = Vec::new();
    let stream_error = |reason: String| AttemptError::Retryable {
        budget: Budget::Stream,
        reason,
        retry_after: None,
    };
    let too_long = || {
        format!(
            "the response took longer than {} ms (stream_max_duration_ms); a model that never \
             finishes is cut off",
            max_duration.as_millis()
        )
    };
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(stream_error(too_long()));
        }
        let wait = idle.min(deadline - now);
        let event = match tokio::time::timeout(wait, events.next()).await {
            Err(_) if tokio::time::Instant::now() >= deadline => {
                return Err(stream_error(too_long()))
            }
            Err(_) => {
                return Err(stream_error(format!(
                    "idle timeout: no data from the model for {} ms",
                    idle.as_millis()
                )))
            }
            Ok(None) => {
                let events = decoder.end();
                if events.is_empty() {
                    return Err(stream_error(
                        "stream closed before the response completed".into(),
                    ));
                }
                if let Some(done) = apply(events, &mut items, on_update) {
                    return done;
                }
                return Err(stream_error(
                    "stream closed before the response completed".into(),
                ));
            }
            Ok(Some(Err(EventStreamError::Transport(err)))) => {
                return Err(stream_error(format!("stream error: {err}")))
            }
            Ok(Some(Err(err))) => return Err(stream_error(format!("stream error: {err}"))),
            Ok(Some(Ok(event))) => event,
        };
        match decoder.event(&event.event, &event.data) {
            Ok(events) => {
                if let Some(done) = apply(events, &mut items, on_update) {
                    return done;
                }
            }
            Err(bad) => {
                tracing::warn!(event = %event.event, reason = %bad.0, "skipped a stream event")
            }
        }
    }
}

/// Acts on decoded events; `Some` when the attempt is over (completed or failed).
pub(super) fn apply(
    events: Vec<StreamEvent>,
    items: &mut Vec<ResponseItem>,
    on_update: &mut impl FnMut(SamplerUpdate),
) -> Option<Result<(Vec<ResponseItem>, TokenUsage), AttemptError>> {
    for event in events {
        match event {
            StreamEvent::TextDelta(delta) => on_update(SamplerUpdate::TextDelta { delta }),
            StreamEvent::ReasoningDelta(delta) => {
                on_update(SamplerUpdate::ReasoningDelta { delta })
            }
            StreamEvent::ItemDone(item) => items.push(item),
            StreamEvent::Completed(usage) => return Some(Ok((std::mem::take(items), usage))),
            StreamEvent::Failed { error, retryable } => {
                return Some(Err(if retryable {
                    AttemptError::Retryable {
                        budget: Budget::Stream,
                        reason: error.to_string(),
                        retry_after: None,
                    }
                } else {
                    AttemptError::Fatal(error)
                }))
            }
            StreamEvent::Ignored => {}
        }
    }
    None
}

pub(super) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
