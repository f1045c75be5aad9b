//! One attempt of a command on a sandbox backend, and what the model reads of it: the layer
//! under the command flow (`exec_flow` decides and retries, `sandbox_retry` asks again; both
//! run their attempts here). It takes the flow's own [`CommandRequest`], not a tool's
//! arguments, so any command tool can use it.

use super::contract::{ToolContext, ToolOutcome};
use super::shell_env::spawn_env;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;
use troupe_messages::events::EventMsg;
use troupe_messages::mailboxes::SandboxMsg;
use troupe_messages::policy::PermissionProfile;
use troupe_messages::tools::{ExecRequest, ExecResult};

/// One command for the command flow, whichever tool asked for it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRequest {
    /// argv; the first element is the program.
    pub command: Vec<String>,
    /// Where it runs (already resolved against the turn's cwd).
    pub cwd: PathBuf,
    /// Kill it after this long.
    pub timeout: Duration,
    /// The call asks to run outside the sandbox.
    pub escalation: bool,
    /// Why the model wants escalation.
    pub justification: Option<String>,
}

/// Extra time the orchestrator waits past a command's own timeout before giving up on it.
pub const REPLY_GRACE: Duration = Duration::from_secs(10);

/// One attempt on the backend the profile calls for; failing closed when no sandbox exists.
pub async fn attempt(
    ctx: &ToolContext,
    request: &CommandRequest,
    profile: &PermissionProfile,
) -> Result<ExecResult, String> {
    let backend = match profile {
        // External: someone outside Troupe confines the process; we add no layer.
        PermissionProfile::Disabled | PermissionProfile::External { .. } => ctx.sandbox.clone(),
        PermissionProfile::Managed { .. } => match &ctx.confined {
            Ok(actor) => actor.clone(),
            Err(why) => return Err(format!("no sandbox available, command not run: {why}")),
        },
    };
    let timeout = request.timeout;
    let cwd = request.cwd.as_path();
    // With the network off, the command's own proxy (when configured) is its way out; it
    // lives until this attempt returns.
    let proxy = match super::network_approval::start_for(ctx, profile, &request.command) {
        Ok(proxy) => proxy,
        Err(why) => {
            ctx.services.tell(EventMsg::Warning {
                message: format!("{why}; the command runs without network"),
            });
            None
        }
    };
    let mut env = spawn_env(&ctx.settings);
    if let Some(proxy) = &proxy {
        env.extend(proxy.env());
    }
    let exec = ExecRequest {
        argv: request.command.clone(),
        cwd: cwd.to_path_buf(),
        env,
        timeout,
        max_output_bytes: ctx.settings.tool_output_max_bytes,
        profile: profile.clone(),
        network_proxy: proxy.as_ref().map(|p| p.bridge.clone()),
    };
    // The runtime's budget of concurrent commands (shared by all agents): a command waits
    // here for a slot, before it counts as begun. Closed only if the runtime is going away.
    let _permit = match &ctx.command_budget {
        Some(budget) => budget.clone().acquire_owned().await.ok(),
        None => None,
    };
    ctx.services
        .begin_command(&ctx.call.call_id, &request.command, cwd);
    let output = ctx.services.output_sink(&ctx.call.call_id);
    let spawn = |reply| SandboxMsg::Spawn {
        request: Box::new(exec),
        output: Some(output),
        reply,
    };
    let result = match crate::ask::ask(&backend, spawn, timeout + REPLY_GRACE).await {
        Ok(inner) => inner,
        Err(crate::ask::AskError::Timeout) => Err("the sandbox did not answer in time".into()),
        Err(crate::ask::AskError::Stopped) => {
            Err("the sandbox backend stopped before the command finished".into())
        }
    };
    report_end(ctx, &request.command, &result);
    result
}

/// What the model reads of an attempt: the command's output and exit as JSON, or the error.
pub fn outcome(result: Result<ExecResult, String>, request: &CommandRequest) -> ToolOutcome {
    let timeout = request.timeout;
    match result {
        Ok(exec) => ToolOutcome {
            success: exec.exit_code == Some(0),
            content: format_for_model(&exec, timeout),
            parts: Vec::new(),
        },
        Err(message) => ToolOutcome::error(format!("execution error: {message}")),
    }
}

fn report_end(ctx: &ToolContext, command: &[String], result: &Result<ExecResult, String>) {
    let (exit_code, output, duration_ms, timed_out) = match result {
        Ok(exec) => (
            exec.exit_code,
            exec.aggregated_output.clone(),
            exec.duration.as_millis() as u64,
            exec.timed_out,
        ),
        Err(message) => (None, message.clone(), 0, false),
    };
    ctx.services.end_command(
        &ctx.call.call_id,
        EventMsg::ExecCommandEnd {
            call_id: ctx.call.call_id.clone(),
            command: command.to_vec(),
            exit_code,
            aggregated_output: output,
            duration_ms,
            timed_out,
            user_shell: false,
        },
    );
}

/// The JSON text the model reads, shaped like Codex's shell output.
pub fn format_for_model(exec: &ExecResult, timeout: Duration) -> String {
    let mut output = exec.aggregated_output.clone();
    if exec.timed_out {
        output = format!(
            "command timed out after {} milliseconds\n{output}",
            timeout.as_millis()
        );
    }
    json!({
        "output": output,
        "metadata": {
            "exit_code": exec.exit_code.unwrap_or(-1),
            "duration_seconds": (exec.duration.as_secs_f64() * 10.0).round() / 10.0,
            "timed_out": exec.timed_out,
        }
    })
    .to_string()
}

#[cfg(test)]
#[path = "exec_attempt_tests.rs"]
mod tests;
