//! The `none` sandbox backend: runs processes without confinement (`danger-full-access`).
//!
//! Every backend is an actor with the same mailbox ([`SandboxMsg`]). Each process runs in a
//! task owned by the actor; stopping the actor (interrupt) kills every process group it
//! started before `post_stop` returns.

pub mod head_tail;
pub mod process;

use process::{kill_group, run_process, LiveGroups};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use troupe_messages::mailboxes::SandboxMsg;

/// How long stopping waits for killed processes to be reaped.
const REAP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Actor of the `none` backend.
pub struct NoneSandboxActor;

/// Process groups started by this backend and still running.
pub struct NoneSandboxState {
    live: LiveGroups,
}

impl NoneSandboxState {
    fn kill_all(&self) {
        let groups: Vec<i32> = self
            .live
            .lock()
            .map(|set| set.iter().copied().collect())
            .unwrap_or_default();
        for pgid in groups {
            kill_group(pgid);
        }
    }
}

impl Actor for NoneSandboxActor {
    type Msg = SandboxMsg;
    type State = NoneSandboxState;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: (),
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(NoneSandboxState {
            live: LiveGroups::default(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SandboxMsg::Spawn { request, reply } => {
                let live = state.live.clone();
                tokio::spawn(async move {
                    let result = run_process(&request, &live).await;
                    let _ = reply.send(result);
                });
            }
            SandboxMsg::KillAll => state.kill_all(),
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.kill_all();
        // Wait until every killed process has been reaped, so "stopped" means "gone".
        let deadline = tokio::time::Instant::now() + REAP_PATIENCE;
        while !state.live.lock().map(|set| set.is_empty()).unwrap_or(true)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "head_tail_tests.rs"]
mod head_tail_tests;
#[cfg(test)]
#[path = "process_tests.rs"]
mod process_tests;
