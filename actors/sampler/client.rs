//! One model request over the Responses API (SSE), with the retry loop around it.

use super::retry::{backoff, parse_retry_after, retryable_status};
use super::sse::{classify_code, decode_event, StreamEvent};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::Duration;
use troupe_messages::errors::ModelError;
use troupe_messages::items::ResponseItem;
use troupe_messages::sampling::{ModelRequest, SamplerUpdate};
use troupe_messages::settings::ProviderSettings;
use troupe_messages::usage::TokenUsage;

/// Which retry budget a failure draws on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Budget {
    Request,
    Stream,
}

/// How one attempt ended badly.
enum AttemptError {
    Fatal(ModelError),
    Retryable {
        budget: Budget,
        reason: String,
        retry_after: Option<Duration>,
    },
}

/// Serves `request` to completion, calling `on_update` with deltas, retries and the result.
pub async fn sample(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    request: &ModelRequest,
    mut on_update: impl FnMut(SamplerUpdate),
) {
    let body = request_body(request);
    let mut request_retries = 0u32;
    let mut stream_retries = 0u32;
    loop {
        let error = match attempt(http, provider, &body, &mut on_update).await {
            Ok((items, usage)) => {
                on_update(SamplerUpdate::Completed { items, usage });
                return;
            }
            Err(error) => error,
        };
        let (budget, reason, retry_after) = match error {
            AttemptError::Fatal(error) => {
                on_update(SamplerUpdate::Failed { error });
                return;
            }
            AttemptError::Retryable {
                budget,
                reason,
                retry_after,
            } => (budget, reason, retry_after),
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

/// The JSON body of a Responses API request.
pub fn request_body(request: &ModelRequest) -> Value {
    let mut body = json!({
        "model": request.model,
        "instructions": request.instructions,
        "input": request.input,
        "tools": request.tools,
        "tool_choice": "auto",
        "parallel_tool_calls": request.parallel_tool_calls,
        "store": false,
        "stream": true,
        "prompt_cache_key": request.prompt_cache_key,
    });
    if let Some(effort) = &request.reasoning_effort {
        body["reasoning"] = json!({ "effort": effort });
    }
    body
}

async fn attempt(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    body: &Value,
    on_update: &mut impl FnMut(SamplerUpdate),
) -> Result<(Vec<ResponseItem>, TokenUsage), AttemptError> {
    let mut builder = http
        .post(format!("{}/responses", provider.base_url))
        .header("accept", "text/event-stream")
        .json(body);
    if let Some(env_key) = &provider.env_key {
        let key = std::env::var(env_key).unwrap_or_default();
        if key.is_empty() {
            return Err(AttemptError::Fatal(ModelError::Unauthorized {
                status: 0,
                message: format!(
                    "environment variable {env_key} (API key of provider `{}`) is not set",
                    provider.id
                ),
            }));
        }
        builder = builder.bearer_auth(key);
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
    read_stream(response, provider, on_update).await
}

fn retry_request(reason: String, retry_after: Option<Duration>) -> AttemptError {
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
    let body = tokio::time::timeout(Duration::from_secs(10), response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let code = parsed
        .pointer("/error/code")
        .and_then(Value::as_str)
        .unwrap_or("");
    let message = parsed
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| body.chars().take(500).collect());
    if code == "context_length_exceeded" || code == "insufficient_quota" {
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
                return Err(stream_error(
                    "stream closed before response.completed".into(),
                ))
            }
            Ok(Some(Err(EventStreamError::Transport(err)))) => {
                return Err(stream_error(format!("stream error: {err}")))
            }
            Ok(Some(Err(err))) => return Err(stream_error(format!("stream error: {err}"))),
            Ok(Some(Ok(event))) => event,
        };
        match decode_event(&event.data) {
            Ok(StreamEvent::TextDelta(delta)) => on_update(SamplerUpdate::TextDelta { delta }),
            Ok(StreamEvent::ReasoningDelta(delta)) => {
                on_update(SamplerUpdate::ReasoningDelta { delta })
            }
            Ok(StreamEvent::ItemDone(item)) => items.push(item),
            Ok(StreamEvent::Completed(usage)) => return Ok((items, usage)),
            Ok(StreamEvent::Failed { error, retryable }) => {
                return Err(if retryable {
                    stream_error(error.to_string())
                } else {
                    AttemptError::Fatal(error)
                })
            }
            Ok(StreamEvent::Ignored) => {}
            Err(bad) => {
                tracing::warn!(event = %event.event, reason = %bad.0, "skipped a stream event")
            }
        }
    }
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
