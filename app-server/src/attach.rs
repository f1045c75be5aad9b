//! Watching a thread that another session of this runtime holds open: a running sub-agent,
//! whose session belongs to its parent's. `thread/resume` cannot reopen it (it is open); the
//! hub subscribes to its session instead, so clients get its live notifications like any
//! other thread's, and never stops it (its parent does).

use super::{request, Hub, HubError};
use troupe_actors::runtime::ThreadClient;
use troupe_messages::rollout::RolloutLine;
use troupe_messages::threads::ThreadSummary;

impl Hub {
    /// A client of the thread's session when it is open in this runtime, with its rollout's
    /// lines up to the moment of subscribing (they prime the pump with the turn in progress).
    /// Read just before subscribing: an event in between is missed, never shown twice.
    pub(super) async fn attach_open(
        &self,
        summary: &ThreadSummary,
    ) -> Result<Option<(ThreadClient, Vec<RolloutLine>)>, HubError> {
        let Some(open) = self
            .runtime
            .open_thread(summary.id)
            .await
            .map_err(request)?
        else {
            return Ok(None);
        };
        let path = summary.rollout_path.clone();
        let lines = tokio::task::spawn_blocking(move || {
            troupe_actors::rollout_recorder::loader::load(&path).map(|loaded| loaded.lines)
        })
        .await
        .map_err(request)?
        .map_err(|err| {
            request(format!(
                "cannot read the rollout of open thread {}: {err}",
                summary.id
            ))
        })?;
        let client = open.subscribe().await.map_err(request)?;
        Ok(Some((client, lines)))
    }
}
