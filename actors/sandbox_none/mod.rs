//! The `none` sandbox backend: runs processes without confinement (`danger-full-access`).
//!
//! Every backend is an actor with the same mailbox ([`SandboxMsg`]). Each process runs in a
//! task owned by the actor; stopping the actor (interrupt, end of turn) kills every process
//! group it started, and every orphan its commands left behind (a `setsid` daemon), before
//! `post_stop` returns.

use ractor::{Actor, ActorProcessingErr, ActorRef};
use troupe_messages::mailboxes::SandboxMsg;
use troupe_messages::policy::PermissionProfile;
use troupe_sandbox::process::{
    kill_all, reap, run_process, sweep_orphans, Containment, LiveGroups,
};

/// Actor of the `none` backend.
pub struct NoneSandboxActor;

/// Process groups started by this backend and still running.
pub struct NoneSandboxState {
    live: LiveGroups,
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
            live: LiveGroups::new(Containment::Group),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SandboxMsg::Spawn {
                request,
                output,
                reply,
            } => {
                if matches!(request.profile, PermissionProfile::Managed { .. }) {
                    // Fail closed: a confined request must never run here by mistake.
                    let _ = reply.send(Err(
                        "internal: a confined request reached the unconfined `none` backend".into(),
                    ));
                    return Ok(());
                }
                let live = state.live.clone();
                tokio::spawn(async move {
                    let result = run_process(&request, &live, output.as_ref()).await;
                    let _ = reply.send(result);
                });
            }
            SandboxMsg::KillAll => kill_all(&state.live),
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        kill_all(&state.live);
        reap(&state.live).await;
        let swept = sweep_orphans(&state.live).await;
        if swept > 0 {
            tracing::info!(swept, "killed processes left behind by the turn's commands");
        }
        Ok(())
    }
}
