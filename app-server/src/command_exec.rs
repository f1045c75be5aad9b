//! Codex's `command/exec`: one command (an argv) run to its end outside any thread, in the
//! sandbox the request's `sandboxPolicy` asks for (the configured one when absent), resolved
//! through the configuration as a `thread/start` asking for it would be (so
//! `requirements.toml` applies), with the environment Troupe gives the model's commands.
//! The answer is its exit code and its buffered stdout and stderr. Streaming, stdin and PTYs
//! (`processId`, `tty`, `streamStdin`, `streamStdoutStderr`, `size`, and the follow-up
//! `command/exec/write|resize|terminate`) are refused with an error saying so.

use crate::hub::{Hub, SettingsRequest};
use std::path::PathBuf;
use std::time::Duration;
use troupe_actors::sandbox_linux::{run_confined, LinuxSandboxArgs};
use troupe_app_server_protocol::protocol::{CommandExecParams, CommandExecResponse};
use troupe_messages::policy::PermissionProfile;
use troupe_messages::tools::ExecRequest;
use troupe_sandbox::process::{run_process, Containment, LiveGroups};

/// Codex's exit code for a command its timeout killed.
pub const TIMEOUT_EXIT_CODE: i32 = 124;
/// "No timeout": long enough never to fire.
const NO_TIMEOUT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Runs the request; an error when it is malformed or the sandbox cannot run it (nothing ran).
pub async fn command_exec(
    hub: &Hub,
    params: CommandExecParams,
) -> Result<CommandExecResponse, String> {
    refuse_streaming(&params)?;
    if params.command.is_empty() {
        return Err("Invalid request: command must not be empty".into());
    }
    if params.timeout_ms.is_some() && params.disable_timeout {
        return Err("Invalid request: timeoutMs cannot be combined with disableTimeout".into());
    }
    if params.output_bytes_cap.is_some() && params.disable_output_cap {
        return Err(
            "Invalid request: outputBytesCap cannot be combined with disableOutputCap".into(),
        );
    }
    let mut ask = SettingsRequest {
        cwd: params.cwd.as_ref().map(PathBuf::from),
        ..SettingsRequest::default()
    };
    crate::turn_settings::apply_sandbox_policy(&mut ask, params.sandbox_policy.as_ref())?;
    let settings = hub.settings(&ask).map_err(|err| err.to_string())?;
    let profile = troupe_sandbox::profile::resolve_profile(
        settings.sandbox_mode,
        &settings.sandbox,
        &settings.cwd,
    )
    .map_err(|err| format!("sandbox configuration error: {err}"))?;
    let mut env = troupe_actors::tool_orchestrator::shell_env::spawn_env(&settings);
    for (key, value) in params.env.unwrap_or_default() {
        match value {
            Some(value) => env.insert(key, value),
            None => env.remove(&key),
        };
    }
    let timeout = match params.timeout_ms {
        _ if params.disable_timeout => NO_TIMEOUT,
        Some(ms) if ms <= 0 => {
            return Err("Invalid request: timeoutMs must be positive".into());
        }
        Some(ms) => Duration::from_millis(ms as u64),
        None => Duration::from_millis(settings.default_shell_timeout_ms),
    };
    let max_output_bytes = match params.output_bytes_cap {
        _ if params.disable_output_cap => usize::MAX,
        Some(cap) => usize::try_from(cap).unwrap_or(usize::MAX),
        None => settings.tool_output_max_bytes,
    };
    let request = ExecRequest {
        argv: params.command,
        cwd: settings.cwd.clone(),
        env,
        timeout,
        max_output_bytes,
        profile: profile.clone(),
        network_proxy: None,
    };
    let result = match profile {
        PermissionProfile::Disabled | PermissionProfile::External { .. } => {
            run_process(&request, &LiveGroups::new(Containment::Group), None).await?
        }
        PermissionProfile::Managed { .. } => {
            let args = LinuxSandboxArgs {
                helper_exe: troupe_sandbox::probe::helper_exe()?,
                backend: troupe_sandbox::probe::choose(settings.sandbox.backend)?,
            };
            run_confined(&args, &request, &LiveGroups::default(), None, None).await?
        }
    };
    let exit_code = match result.exit_code {
        _ if result.timed_out => TIMEOUT_EXIT_CODE,
        Some(code) => code,
        // Killed by a signal the backend did not name.
        None => -1,
    };
    Ok(CommandExecResponse {
        exit_code,
        stdout: result.stdout,
        stderr: result.stderr,
    })
}

/// What Troupe's buffered `command/exec` does not offer, named when asked for.
fn refuse_streaming(params: &CommandExecParams) -> Result<(), String> {
    let asked: Vec<&str> = [
        (params.process_id.is_some(), "processId"),
        (params.tty, "tty"),
        (params.stream_stdin, "streamStdin"),
        (params.stream_stdout_stderr, "streamStdoutStderr"),
        (params.size.as_ref().is_some_and(|s| !s.is_null()), "size"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect();
    if asked.is_empty() {
        return Ok(());
    }
    Err(format!(
        "Invalid request: {} not supported: Troupe's command/exec runs the command to its end and answers with its buffered output (no streaming, stdin or terminal)",
        asked.join(", ")
    ))
}
