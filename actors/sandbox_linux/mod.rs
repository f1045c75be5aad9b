//! The Linux sandbox backends, `linux` (namespaces) and `landlock` (fallback): the same
//! mailbox as `none`, but each process is started through the sandbox helper (the `troupe`
//! binary re-executed, see [`troupe_sandbox::helper`]) which confines it and then execs the command.
//!
//! The capture, process-group and kill code is `troupe_sandbox::process`, shared with `none`.

pub mod zygote;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::path::PathBuf;
use std::sync::Arc;
use troupe_messages::mailboxes::SandboxMsg;
use troupe_messages::policy::PermissionProfile;
use troupe_messages::tools::{ExecOutputSink, ExecRequest, ExecResult};
use troupe_sandbox::helper::{
    helper_argv, HelperBackend, HelperSpec, SETUP_FAILED_EXIT, SETUP_FAILED_PREFIX,
};
use troupe_sandbox::process::{kill_all, reap, run_process, LiveGroups};
use troupe_sandbox::{probe, profile};
use zygote::{ZygotePool, ZygoteRun};

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
    zygotes: Arc<ZygotePool>,
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
            zygotes: Arc::new(ZygotePool::new(args.helper_exe.clone())),
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
            SandboxMsg::Spawn {
                request,
                output,
                reply,
            } => {
                let live = state.live.clone();
                let args = state.args.clone();
                let zygotes = state.zygotes.clone();
                tokio::spawn(async move {
                    let result =
                        run_confined(&args, &request, &live, Some(&zygotes), output.as_ref()).await;
                    let _ = reply.send(result);
                });
            }
            SandboxMsg::KillAll => {
                kill_all(&state.live);
                state.zygotes.kill_all();
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        kill_all(&state.live);
        state.zygotes.shutdown().await;
        reap(&state.live).await;
        Ok(())
    }
}

/// Runs one request confined: in a zygote of the `linux` backend when `zygotes` is given
/// (and the request fits a control message), else through the one-shot helper. A sandbox
/// that could not be built is an error (nothing ran), never a silent unconfined run.
/// `output` gets the command's output while it runs.
pub async fn run_confined(
    args: &LinuxSandboxArgs,
    request: &ExecRequest,
    live: &LiveGroups,
    zygotes: Option<&ZygotePool>,
    output: Option<&ExecOutputSink>,
) -> Result<ExecResult, String> {
    if request.profile == PermissionProfile::Disabled {
        return Err("internal: an unconfined request reached a sandbox backend".into());
    }
    profile::validate(&request.profile).map_err(|e| e.to_string())?;
    let spec = HelperSpec {
        backend: args.backend,
        profile: request.profile.clone(),
        cwd: request.cwd.clone(),
        network_proxy: request.network_proxy.clone(),
    };
    let result = match zygotes {
        // A proxied command needs the bridge of the one-shot helper.
        Some(pool)
            if spec.backend == HelperBackend::Linux
                && spec.network_proxy.is_none()
                && ZygotePool::fits(request) =>
        {
            run_in_zygote(pool, &spec, request, output).await?
        }
        _ => {
            let mut wrapped = request.clone();
            wrapped.argv = helper_argv(&args.helper_exe, &spec, &request.argv)?;
            run_process(&wrapped, live, output).await?
        }
    };
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

/// One retry: a stale zygote is replaced by a fresh one, whose view is current.
async fn run_in_zygote(
    pool: &ZygotePool,
    spec: &HelperSpec,
    request: &ExecRequest,
    output: Option<&ExecOutputSink>,
) -> Result<ExecResult, String> {
    for _ in 0..2 {
        match pool.run(spec, request, output).await {
            Ok(ZygoteRun::Done(result)) => return Ok(result),
            Ok(ZygoteRun::Stale) => continue,
            Err(message) => return Err(message),
        }
    }
    Err("the sandbox view kept changing while the command was being started; it did not run".into())
}

/// The argv that runs `argv` under `profile` for callers that start processes themselves
/// (`exec_command` sessions): unchanged when unconfined, wrapped in the helper otherwise
/// (with the command's network proxy bridged in, if it has one). An error means
/// no sandbox can run here, and the command must not run (fail closed).
pub fn confine_argv(
    kind: troupe_messages::policy::SandboxBackendKind,
    profile: &PermissionProfile,
    cwd: &std::path::Path,
    argv: &[String],
    network_proxy: Option<troupe_messages::permissions::ProxyBridge>,
) -> Result<Vec<String>, String> {
    match profile {
        PermissionProfile::Disabled | PermissionProfile::External { .. } => Ok(argv.to_vec()),
        PermissionProfile::Managed { .. } => {
            profile::validate(profile).map_err(|e| e.to_string())?;
            let spec = HelperSpec {
                backend: probe::choose(kind)?,
                profile: profile.clone(),
                cwd: cwd.to_path_buf(),
                network_proxy,
            };
            helper_argv(&probe::helper_exe()?, &spec, argv)
        }
    }
}
