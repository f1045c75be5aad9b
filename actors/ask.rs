//! Asking an actor and waiting for its answer, the one way the crate does it: a request whose
//! message carries a reply port, a deadline, and two ways to fail.

use ractor::rpc::CallResult;
use ractor::{ActorRef, Message, RpcReplyPort};
use std::time::Duration;
use thiserror::Error;

/// Why an answer did not come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AskError {
    #[error("timed out")]
    Timeout,
    #[error("it stopped")]
    Stopped,
}

/// Sends the message `request` builds around a reply port; waits up to `timeout`.
pub async fn ask<M: Message, T: Send + 'static>(
    actor: &ActorRef<M>,
    request: impl FnOnce(RpcReplyPort<T>) -> M,
    timeout: Duration,
) -> Result<T, AskError> {
    match actor.call(request, Some(timeout)).await {
        Ok(CallResult::Success(answer)) => Ok(answer),
        Ok(CallResult::Timeout) => Err(AskError::Timeout),
        Ok(CallResult::SenderError) | Err(_) => Err(AskError::Stopped),
    }
}
