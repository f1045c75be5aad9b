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

/// A thread another process runs (it holds the rollout's lock) cannot be opened here: the
/// error names that process and how to take the thread over or reach it meanwhile.
pub(super) fn check_not_held_elsewhere(summary: &ThreadSummary) -> Result<(), HubError> {
    let Some(pid) = troupe_actors::rollout_recorder::lock::holder(&summary.rollout_path) else {
        return Ok(());
    };
    let program = crate::last_turns::holder_program(pid)
        .map(|line| format!(" (`{line}`)"))
        .unwrap_or_default();
    let id = summary.id;
    Err(request(format!(
        "thread {id} is open in another Troupe process, pid {pid}{program}; one process runs a \
         thread at a time. To take it over, stop that process (SIGTERM: its running turn is \
         recorded as interrupted) and resume again. Meanwhile `thread/read` shows it, and \
         `troupe queue --thread {id} --message TEXT` hands it input at its next step."
    )))
}
