//! `exec_command`: starts a command in a PTY and returns what it printed within
//! `yield_time_ms`; a command still running gets a session id for `write_stdin`. The PTY
//! sessions themselves live in `unified_exec/`.

use super::apply_patch as apply_patch_tool;
use crate::tool_orchestrator::intercept;
use crate::tool_orchestrator::registry::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use crate::tool_orchestrator::shell_env::child_env;
use crate::tool_orchestrator::unified_exec::{
    offered, output, parse, sessions, yield_time, PtySession, SessionKey, DEFAULT_MAX_OUTPUT_TOKENS,
};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use std::time::Instant;
use troupe_messages::events::EventMsg;
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::{ToolCall, ToolSpec};

const DEFAULT_EXEC_YIELD_MS: u64 = 10_000;

/// Arguments of `exec_command`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecCommandArgs {
    pub cmd: String,
    #[serde(default)]
    pub workdir: Option<String>,
    /// Run through a login shell (`bash -lc`, the default) or a plain one (`bash -c`).
    #[serde(default)]
    pub login: Option<bool>,
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    #[serde(default)]
    pub max_output_tokens: Option<usize>,
    #[serde(default)]
    pub with_escalated_permissions: Option<bool>,
    #[serde(default)]
    pub justification: Option<String>,
}

/// Handler of `exec_command`.
pub struct ExecCommandHandler;

impl ToolHandler for ExecCommandHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "exec_command".into(),
            description: "Runs a command (through `bash -lc`) in a pseudo-terminal. Returns the \
                          output printed within yield_time_ms; if the command is still running, \
                          the result names a session_id to use with write_stdin."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "cmd": {"type": "string", "description": "Shell command to run."},
                    "workdir": {"type": "string", "description": "Working directory."},
                    "login": {"type": "boolean",
                        "description": "Load the login profile (bash -lc); default true."},
                    "yield_time_ms": {"type": "number",
                        "description": "How long to wait for output before returning (default 10000)."},
                    "max_output_tokens": {"type": "number",
                        "description": "Output beyond this many tokens is cut from the middle."},
                    "with_escalated_permissions": {"type": "boolean"},
                    "justification": {"type": "string"}
                },
                "required": ["cmd"],
                "additionalProperties": false
            }),
        }
    }

    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        offered(settings).then(|| self.spec())
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn concurrency_for(&self, call: &ToolCall) -> Concurrency {
        let is_patch = parse::<ExecCommandArgs>("exec_command", &call.payload)
            .is_ok_and(|args| intercept::from_script(&args.cmd).is_some());
        if is_patch {
            Concurrency::Exclusive
        } else {
            Concurrency::Shared
        }
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(exec_command(ctx))
    }
}

async fn exec_command(ctx: ToolContext) -> ToolOutcome {
    let args: ExecCommandArgs = match parse("exec_command", &ctx.call.payload) {
        Ok(args) => args,
        Err(message) => return ToolOutcome::error(message),
    };
    let cwd = match &args.workdir {
        Some(dir) => ctx.settings.cwd.join(dir),
        None => ctx.settings.cwd.clone(),
    };
    if let Some(invocation) = intercept::from_script(&args.cmd) {
        let cwd = match &invocation.cd {
            Some(dir) => cwd.join(dir),
            None => cwd,
        };
        return apply_patch_tool::apply(&ctx, invocation.patch, cwd).await;
    }
    if !ctx.services.exec.has_room() {
        return ToolOutcome::error(format!(
            "too many running sessions ({}); end one with write_stdin (Ctrl-C is \"\\u0003\") \
             before starting another",
            sessions::MAX_SESSIONS
        ));
    }
    let flag = if args.login.unwrap_or(true) {
        "-lc"
    } else {
        "-c"
    };
    let argv = vec!["bash".to_string(), flag.to_string(), args.cmd.clone()];
    // Same gate as `shell`: rules, approval, then the sandbox. A PTY session cannot be
    // retried, so a sandbox denial is reported, not escalated.
    let escalation = args.with_escalated_permissions == Some(true);
    let decision = match crate::tool_orchestrator::exec_flow::decide(
        &ctx,
        &argv,
        &cwd,
        escalation,
        args.justification.as_deref(),
    )
    .await
    {
        Ok(decision) => decision,
        Err(outcome) => return outcome,
    };
    let profile = if decision.bypass_first {
        troupe_sandbox::profile::escalated(&decision.profile)
    } else {
        decision.profile
    };
    let spawn_argv = match crate::sandbox_linux::confine_argv(
        ctx.settings.sandbox.backend,
        &profile,
        &cwd,
        &argv,
    ) {
        Ok(spawn_argv) => spawn_argv,
        Err(why) => {
            return ToolOutcome::error(format!("no sandbox available, command not run: {why}"))
        }
    };
    let mut env = child_env(&ctx.settings.context.shell_env, std::env::vars());
    // A plain terminal: no pagers waiting for a key, no colour codes in the output.
    for (key, value) in [
        ("TERM", "dumb"),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("NO_COLOR", "1"),
    ] {
        env.insert(key.into(), value.into());
    }
    // Begin and end go the same way (straight to the session), so the end never overtakes.
    let exec = &ctx.services.exec;
    exec.begin(&ctx.call.call_id, &argv, &cwd);
    let started = Instant::now();
    let live = ctx.services.pty_output_sink(&ctx.call.call_id);
    let spawned = PtySession::spawn(
        &spawn_argv,
        &cwd,
        &env,
        ctx.call.call_id.clone(),
        Some(live),
    );
    let session = match spawned {
        Ok(session) => session,
        Err(message) => {
            exec.abandon(&ctx.call.call_id);
            exec.tell(EventMsg::ExecCommandEnd {
                call_id: ctx.call.call_id.clone(),
                command: argv,
                exit_code: None,
                aggregated_output: message.clone(),
                duration_ms: 0,
                timed_out: false,
            });
            return ToolOutcome::error(message);
        }
    };
    // Tracked at once: if the turn ends while this call waits, the turn's end kills it.
    let ticket = exec.track(session.clone());
    let collected = session
        .collect(yield_time(args.yield_time_ms, DEFAULT_EXEC_YIELD_MS))
        .await;
    let max_tokens = args.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
    if let Some(code) = collected.exit_code {
        exec.report_exit(SessionKey::Starting(ticket), code);
        return output::outcome(started, &collected, None, max_tokens);
    }
    match exec.publish(ticket) {
        Some(Ok(id)) => output::outcome(started, &collected, Some(id), max_tokens),
        Some(Err(message)) => {
            exec.kill(
                SessionKey::Starting(ticket),
                "too many sessions were running",
            )
            .await;
            ToolOutcome::error(message)
        }
        // The turn is ending and has killed it (and reported its end).
        None => output::outcome(started, &collected, None, max_tokens),
    }
}
