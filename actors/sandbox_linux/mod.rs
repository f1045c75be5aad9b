//! The Linux sandbox backends, `linux` (namespaces) and `landlock` (fallback): the same
//! mailbox as `none`, but each process is started through the sandbox helper (the `troupe`
//! binary re-executed, see [`helper`]) which confines it and then execs the command.
//!
//! The capture, process-group and kill code is `sandbox_none::process`, shared.

pub mod helper;
pub mod probe;
pub mod profile;

use crate::sandbox_none::process::{kill_all, reap, run_process, LiveGroups};
use helper::{helper_argv, HelperBackend, HelperSpec, SETUP_FAILED_EXIT, SETUP_FAILED_PREFIX};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::path::PathBuf;
use troupe_messages::mailboxes::SandboxMsg;
use troupe_messages::policy::PermissionProfile;
use troupe_messages::tools::{ExecRequest, ExecResult};

/// Actor of the `linux` and `landlock` backends.
pub struct LinuxSandboxActor;

/// Startup arguments.
#[derive(Debug, Clone)]
pub struct LinuxSandboxArgs {
    /// The binary that acts as the helper (normally `troupe` itself).
    pub helper_exe: PathBuf,
    pub backend: HelperBackend,
}

pub struct LinuxSandboxState {
    args: LinuxSandboxArgs,
    live: LiveGroups,
}

impl Actor for LinuxSandboxActor {
    type Msg = SandboxMsg;
    type State = LinuxSandboxState;
    type Arguments = LinuxSandboxArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: LinuxSandboxArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(LinuxSandboxState {
            args,
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
                let args = state.args.clone();
                tokio::spawn(async move {
                    let _ = reply.send(run_confined(&args, &request, &live).await);
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
        Ok(())
    }
}

/// Runs one request under the helper; a helper that could not build the sandbox is an
/// error (nothing ran), never a silent unconfined run.
pub async fn run_confined(
    args: &LinuxSandboxArgs,
    request: &ExecRequest,
    live: &LiveGroups,
) -> Result<ExecResult, String> {
    if request.profile == PermissionProfile::Disabled {
        return Err("internal: an unconfined request reached a sandbox backend".into());
    }
    profile::validate(&request.profile).map_err(|e| e.to_string())?;
    let spec = HelperSpec {
        backend: args.backend,
        profile: request.profile.clone(),
        cwd: request.cwd.clone(),
    };
    let mut wrapped = request.clone();
    wrapped.argv = helper_argv(&args.helper_exe, &spec, &request.argv)?;
    let result = run_process(&wrapped, live).await?;
    if result.exit_code == Some(SETUP_FAILED_EXIT) {
        if let Some(line) = result
            .stderr
            .lines()
            .find(|l| l.starts_with(SETUP_FAILED_PREFIX))
        {
            return Err(format!(
                "the sandbox could not be set up, so the command did not run: {}",
                line.trim_start_matches(SETUP_FAILED_PREFIX).trim()
            ));
        }
    }
    Ok(result)
}

/// The argv that runs `argv` under `profile` for callers that start processes themselves
/// (PTY sessions): unchanged when unconfined, wrapped in the helper otherwise. An error means
/// no sandbox can run here, and the command must not run (fail closed).
pub fn confine_argv(
    kind: troupe_messages::policy::SandboxBackendKind,
    profile: &PermissionProfile,
    cwd: &std::path::Path,
    argv: &[String],
) -> Result<Vec<String>, String> {
    match profile {
        PermissionProfile::Disabled | PermissionProfile::External { .. } => Ok(argv.to_vec()),
        PermissionProfile::Managed { .. } => {
            profile::validate(profile).map_err(|e| e.to_string())?;
            let spec = HelperSpec {
                backend: probe::choose(kind)?,
                profile: profile.clone(),
                cwd: cwd.to_path_buf(),
            };
            helper_argv(&probe::helper_exe()?, &spec, argv)
        }
    }
}
