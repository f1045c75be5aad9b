//! Errors that leave an actor as data: in events, in replies, in rollouts.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why talking to the model failed, classified for retry decisions and user messages.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelError {
    /// The prompt no longer fits the model's context window. Not retried.
    #[error("the conversation is too long for the model's context window: {message}")]
    ContextWindowExceeded { message: String },
    /// The account is out of quota or credits. Not retried.
    #[error("quota exceeded: {message}; check your plan and billing details")]
    QuotaExceeded { message: String },
    /// The API key is missing, wrong or lacks access. Not retried.
    #[error("the provider rejected the credentials (HTTP {status}): {message}")]
    Unauthorized { status: u16, message: String },
    /// The request was rejected as invalid. Not retried.
    #[error("the provider rejected the request (HTTP {status}): {message}")]
    BadRequest { status: u16, message: String },
    /// Retries were exhausted on retryable failures; `last` says what the last one was.
    #[error("gave up after {attempts} attempts; last error: {last}")]
    RetriesExhausted { attempts: u32, last: String },
    /// The provider said the response failed.
    #[error("the model response failed: {message}")]
    ResponseFailed { message: String },
    /// A per-turn limit was reached (requests, compactions); the turn stops.
    #[error("the turn was stopped: {message}")]
    LimitReached { message: String },
    /// Something internal broke (a crashed sampler, a lost actor).
    #[error("internal error: {message}")]
    Internal { message: String },
}

/// A failure that ended a turn, as reported to clients.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum TurnError {
    #[error("{0}")]
    Model(ModelError),
    #[error("internal error: {message}")]
    Internal { message: String },
}
