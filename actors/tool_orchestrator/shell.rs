//! The `shell` tool: argv, workdir, timeout; runs through the chosen sandbox backend.

use super::registry::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use super::{apply_patch_tool, intercept};
use futures::future::BoxFuture;
use serde_json::json;
use std::time::Duration;
use troupe_messages::events::EventMsg;
use troupe_messages::mailboxes::{SandboxMsg, TurnMsg};
use troupe_messages::settings::{SessionSettings, ShellToolType};
use troupe_messages::tools::{
    ExecRequest, ExecResult, ShellToolArgs, ToolCall, ToolPayload, ToolSpec,
};

/// Handler of the `shell` tool.
pub struct ShellHandler;

/// Extra time the orchestrator waits past a command's own timeout before giving up on it.
const REPLY_GRACE: Duration = Duration::from_secs(10);

impl ToolHandler for ShellHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "shell".into(),
            description: "Runs a command and returns its output. `command` is argv: use \
                          [\"bash\", \"-lc\", \"...\"] for shell syntax."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "array", "items": {"type": "string"},
                                "description": "The command to run, as argv."},
                    "workdir": {"type": "string", "description": "Working directory."},
                    "timeout_ms": {"type": "number", "description": "Timeout in milliseconds."},
                    "with_escalated_permissions": {"type": "boolean",
                        "description": "Ask to run outside the sandbox."},
                    "justification": {"type": "string",
                        "description": "Why escalated permissions are needed."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        }
    }

    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        (settings.tools.shell == ShellToolType::Shell).then(|| self.spec())
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn concurrency_for(&self, call: &ToolCall) -> Concurrency {
        let is_patch = parse_shell_args(&call.payload)
            .is_ok_and(|args| intercept::from_argv(&args.command).is_some());
        if is_patch {
            Concurrency::Exclusive
        } else {
            Concurrency::Shared
        }
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(run_shell(ctx))
    }
}

/// Parses the model's arguments; the error names what is wrong.
pub fn parse_shell_args(payload: &ToolPayload) -> Result<ShellToolArgs, String> {
    let ToolPayload::Function { arguments } = payload else {
        return Err("shell expects JSON function arguments".into());
    };
    let args: ShellToolArgs = serde_json::from_str(arguments)
        .map_err(|err| format!("invalid arguments for shell: {err}"))?;
    if args.command.is_empty() || args.command[0].is_empty() {
        return Err("invalid arguments for shell: `command` must name a program".into());
    }
    Ok(args)
}

async fn run_shell(ctx: ToolContext) -> ToolOutcome {
    let args = match parse_shell_args(&ctx.call.payload) {
        Ok(args) => args,
        Err(message) => return ToolOutcome::error(message),
    };
    let cwd = match &args.workdir {
        Some(dir) => ctx.settings.cwd.join(dir),
        None => ctx.settings.cwd.clone(),
    };
    if let Some(invocation) = intercept::from_argv(&args.command) {
        // Never run as a process: the structured path checks, reports and writes atomically.
        let cwd = match &invocation.cd {
            Some(dir) => cwd.join(dir),
            None => cwd,
        };
        return apply_patch_tool::apply(&ctx, invocation.patch, cwd).await;
    }
    let timeout = Duration::from_millis(
        args.timeout_ms
            .unwrap_or(ctx.settings.default_shell_timeout_ms),
    );
    let request = ExecRequest {
        argv: args.command.clone(),
        cwd: cwd.clone(),
        env: super::shell_env::child_env(&ctx.settings.context.shell_env, std::env::vars()),
        timeout,
        max_output_bytes: ctx.settings.tool_output_max_bytes,
    };
    let call_id = ctx.call.call_id.clone();
    let _ = ctx
        .turn
        .send_message(TurnMsg::ToolEvent(EventMsg::ExecCommandBegin {
            call_id: call_id.clone(),
            command: args.command.clone(),
            cwd: cwd.clone(),
        }));
    let result = ctx
        .sandbox
        .call(
            |reply| SandboxMsg::Spawn {
                request: Box::new(request),
                reply,
            },
            Some(timeout + REPLY_GRACE),
        )
        .await;
    let result = match result {
        Ok(ractor::rpc::CallResult::Success(inner)) => inner,
        Ok(ractor::rpc::CallResult::Timeout) => Err("the sandbox did not answer in time".into()),
        Ok(ractor::rpc::CallResult::SenderError) | Err(_) => {
            Err("the sandbox backend stopped before the command finished".into())
        }
    };
    report_end(&ctx, &args.command, &result);
    match result {
        Ok(exec) => ToolOutcome {
            success: exec.exit_code == Some(0),
            content: format_for_model(&exec, timeout),
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
    let _ = ctx
        .turn
        .send_message(TurnMsg::ToolEvent(EventMsg::ExecCommandEnd {
            call_id: ctx.call.call_id.clone(),
            command: command.to_vec(),
            exit_code,
            aggregated_output: output,
            duration_ms,
            timed_out,
        }));
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
