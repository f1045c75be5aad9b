//! The `shell` tool: argv, workdir, timeout; approval and sandboxing are in `exec_flow`.

use super::apply_patch as apply_patch_tool;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use crate::tool_orchestrator::exec_flow::{self, CommandRequest};
use crate::tool_orchestrator::intercept;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::Duration;
use troupe_messages::settings::{SessionSettings, ShellToolType};
use troupe_messages::tools::{ToolCall, ToolPayload, ToolSpec};

/// Arguments of the `shell` tool, as the model writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellToolArgs {
    /// argv; the first element is the program.
    pub command: Vec<String>,
    /// Working directory; relative paths are taken from the turn's cwd.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Kill the command after this many milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The model asks to run outside the sandbox (legacy Codex name).
    #[serde(default)]
    pub with_escalated_permissions: Option<bool>,
    /// `"require_escalated"` asks to run outside the sandbox; `"use_default"` does not.
    #[serde(default)]
    pub sandbox_permissions: Option<String>,
    /// Why the model wants escalation.
    #[serde(default)]
    pub justification: Option<String>,
}

/// Handler of the `shell` tool.
pub struct ShellHandler;

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
                        "description": "Ask to run outside the sandbox (legacy name)."},
                    "sandbox_permissions": {"type": "string",
                        "enum": ["use_default", "require_escalated"],
                        "description": "`require_escalated` asks the user to run this \
                                        command outside the sandbox (on-request only)."},
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
    let escalation = match exec_flow::wants_escalation(
        "shell",
        args.sandbox_permissions.as_deref(),
        args.with_escalated_permissions,
    ) {
        Ok(escalation) => escalation,
        Err(message) => return ToolOutcome::error(message),
    };
    let request = CommandRequest {
        command: args.command,
        cwd,
        timeout: Duration::from_millis(
            args.timeout_ms
                .unwrap_or(ctx.settings.default_shell_timeout_ms),
        ),
        escalation,
        justification: args.justification,
    };
    exec_flow::run(&ctx, &request).await
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
