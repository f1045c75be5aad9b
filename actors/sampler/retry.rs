//! Retry policy: which failures are retried, and how long to wait. Pure; no I/O.

use std::time::Duration;

/// Longest wait we accept from a `Retry-After` header.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Exponential backoff with ±10% jitter: 200 ms, 400 ms, 800 ms, … capped at 10 s.
pub fn backoff(attempt: u32) -> Duration {
    let base_ms = 200u64.saturating_mul(1u64 << attempt.saturating_sub(1).min(16));
    let capped = base_ms.min(10_000) as f64;
    let jitter = rand::random::<f64>() * 0.2 + 0.9;
    Duration::from_millis((capped * jitter) as u64)
}

/// Reads `Retry-After` as seconds (HTTP-date forms are ignored), capped.
pub fn parse_retry_after(value: Option<&str>) -> Option<Duration> {
    let seconds: f64 = value?.trim().parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(seconds).min(MAX_RETRY_AFTER))
}

/// Whether an HTTP status is worth retrying.
pub fn retryable_status(status: u16) -> bool {
    status == 429 || status == 408 || status == 409 || status >= 500
}
