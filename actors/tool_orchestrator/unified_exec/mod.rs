//! Unified exec: `exec_command` starts a command in a PTY and returns what it printed within
//! `yield_time_ms`; a command still running gets a session id, and `write_stdin` types into
//! it and collects more. The sessions live in the turn's `TurnServices` (so they outlive a
//! call and die with the turn); each session's end is reported exactly once — by whichever
//! call sees it exit, or by the turn's end, which kills it (`sessions.rs`).

pub mod output;
pub mod session;
pub mod sessions;

pub use session::PtySession;
pub use sessions::{ExecSessions, SessionKey};

use super::apply_patch_tool;
use super::intercept;
use super::registry::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use super::shell_env::child_env;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use std::time::{Duration, Instant};
use troupe_messages::events::EventMsg;
use troupe_messages::settings::{SessionSettings, ShellToolType};
use troupe_messages::tools::{ToolCall, ToolPayload, ToolSpec};

const DEFAULT_EXEC_YIELD_MS: u64 = 10_000;
const DEFAULT_WRITE_YIELD_MS: u64 = 250;
const MIN_YIELD_MS: u64 = 50;
const MAX_YIELD_MS: u64 = 30_000;
const DEFAULT_MAX_OUTPUT_TOKENS: usize = 10_000;

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

/// Arguments of `write_stdin`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteStdinArgs {
    pub session_id: u32,
    #[serde(default)]
    pub chars: String,
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    #[serde(default)]
    pub max_output_tokens: Option<usize>,
}

fn parse<T: serde::de::DeserializeOwned>(tool: &str, payload: &ToolPayload) -> Result<T, String> {
    let ToolPayload::Function { arguments } = payload else {
        return Err(format!("{tool} expects JSON function arguments"));
    };
    serde_json::from_str(arguments).map_err(|err| format!("invalid arguments for {tool}: {err}"))
}

fn yield_time(requested: Option<u64>, default: u64) -> Duration {
    Duration::from_millis(
        requested
            .unwrap_or(default)
            .clamp(MIN_YIELD_MS, MAX_YIELD_MS),
    )
}

fn offered(settings: &SessionSettings) -> bool {
    settings.tools.shell == ShellToolType::ExecCommand
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

/// Handler of `write_stdin`.
pub struct WriteStdinHandler;

impl ToolHandler for WriteStdinHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "write_stdin".into(),
            description: "Writes characters to a running exec_command session (\"\\n\" is Enter, \
                          \"\\u0003\" is Ctrl-C; empty chars just polls) and returns the output \
                          printed within yield_time_ms."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "session_id": {"type": "number"},
                    "chars": {"type": "string"},
                    "yield_time_ms": {"type": "number",
                        "description": "How long to wait for output (default 250)."},
                    "max_output_tokens": {"type": "number"}
                },
                "required": ["session_id"],
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

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(write_stdin(ctx))
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
    let decision = match super::exec_flow::decide(
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
    exec.tell(EventMsg::ExecCommandBegin {
        call_id: ctx.call.call_id.clone(),
        command: argv.clone(),
        cwd: cwd.clone(),
    });
    let started = Instant::now();
    let session = match PtySession::spawn(&spawn_argv, &cwd, &env, ctx.call.call_id.clone()) {
        Ok(session) => session,
        Err(message) => {
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

async fn write_stdin(ctx: ToolContext) -> ToolOutcome {
    let args: WriteStdinArgs = match parse("write_stdin", &ctx.call.payload) {
        Ok(args) => args,
        Err(message) => return ToolOutcome::error(message),
    };
    let Some(session) = ctx.services.exec.get(args.session_id) else {
        return ToolOutcome::error(format!(
            "write_stdin failed: there is no running session {}; it exited (its exit was \
             reported already) or was never started",
            args.session_id
        ));
    };
    let started = Instant::now();
    if !args.chars.is_empty() {
        if let Err(message) = session.write(&args.chars) {
            return ToolOutcome::error(message);
        }
    }
    let collected = session
        .collect(yield_time(args.yield_time_ms, DEFAULT_WRITE_YIELD_MS))
        .await;
    let max_tokens = args.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
    match collected.exit_code {
        Some(code) => {
            ctx.services
                .exec
                .report_exit(SessionKey::Live(args.session_id), code);
            output::outcome(started, &collected, None, max_tokens)
        }
        None => output::outcome(started, &collected, Some(args.session_id), max_tokens),
    }
}
