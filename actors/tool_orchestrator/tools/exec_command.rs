//! `exec_command`: starts a command (on plain pipes, or in a PTY with `tty: true`) and
//! returns what it printed within `yield_time_ms`; a command still running gets a session id
//! for `write_stdin`. The sessions themselves live in `unified_exec/`.

use super::apply_patch as apply_patch_tool;
use super::exec_output as output;
use crate::tool_orchestrator::contract::parse_args as parse;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use crate::tool_orchestrator::intercept;
use crate::tool_orchestrator::shell_env::spawn_env;
use crate::tool_orchestrator::unified_exec::{
    offered, sessions, yield_time, PtySession, SessionKey, DEFAULT_MAX_OUTPUT_TOKENS,
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
    /// The model asks to run outside the sandbox (legacy name of `sandbox_permissions`).
    #[serde(default)]
    pub with_escalated_permissions: Option<bool>,
    /// `"require_escalated"` asks to run outside the sandbox; `"use_default"` does not.
    #[serde(default)]
    pub sandbox_permissions: Option<String>,
    /// The approval prefix the model proposes with an escalation; shown to the user.
    #[serde(default)]
    pub prefix_rule: Option<Vec<String>>,
    #[serde(default)]
    pub justification: Option<String>,
    /// A terminal for the command (needed to type into it); plain pipes by default.
    #[serde(default)]
    pub tty: Option<bool>,
    /// The shell to run `cmd` with (bash, sh, zsh, dash, ksh, mksh, ash); bash by default.
    #[serde(default)]
    pub shell: Option<String>,
}

impl ExecCommandArgs {
    /// The argv that runs `cmd`: `<shell> -lc|-c <cmd>`.
    fn argv(&self) -> Result<Vec<String>, String> {
        let shell = match self.shell.as_deref() {
            None => "bash",
            Some(shell) if troupe_messages::shell_split::is_plain_shell(shell) => shell,
            Some(other) => {
                return Err(format!(
                    "exec_command: `shell` must be one of bash, sh, zsh, dash, ksh, mksh, ash \
                     (a name or an absolute path); got {other:?}"
                ))
            }
        };
        let flag = if self.login.unwrap_or(true) {
            "-lc"
        } else {
            "-c"
        };
        Ok(vec![shell.to_string(), flag.to_string(), self.cmd.clone()])
    }

    /// The justification shown with an approval, with the proposed prefix rule if any.
    fn approval_reason(&self) -> Option<String> {
        let prefix = self
            .prefix_rule
            .as_ref()
            .filter(|prefix| !prefix.is_empty())
            .map(|prefix| {
                format!(
                    "proposed rule: commands starting with `{}`",
                    prefix.join(" ")
                )
            });
        match (self.justification.clone(), prefix) {
            (Some(why), Some(prefix)) => Some(format!("{why} ({prefix})")),
            (why, prefix) => why.or(prefix),
        }
    }
}

/// Handler of `exec_command`.
pub struct ExecCommandHandler;

impl ToolHandler for ExecCommandHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "exec_command".into(),
            description: "Runs a command (through `bash -lc`), returning the output printed \
                          within yield_time_ms; if the command is still running, the result \
                          names a session_id to use with write_stdin (with tty: true to type \
                          into it)."
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
                    "tty": {"type": "boolean",
                        "description": "True runs the command in a pseudo-terminal (needed to \
                                        type into it with write_stdin); false or omitted uses \
                                        plain pipes."},
                    "shell": {"type": "string",
                        "description": "Shell to run cmd with (bash, sh, zsh, dash, ksh, mksh, \
                                        ash); default bash."},
                    "sandbox_permissions": {"type": "string",
                        "enum": ["use_default", "require_escalated"],
                        "description": "`require_escalated` asks the user to run this \
                                        command outside the sandbox (on-request only)."},
                    "prefix_rule": {"type": "array", "items": {"type": "string"},
                        "description": "With require_escalated: the command prefix you \
                                        propose for approval, shown to the user."},
                    "with_escalated_permissions": {"type": "boolean",
                        "description": "Legacy name of sandbox_permissions: require_escalated."},
                    "justification": {"type": "string",
                        "description": "Why escalated permissions are needed."}
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
    let (argv, escalation) = match (
        args.argv(),
        crate::tool_orchestrator::exec_flow::wants_escalation(
            "exec_command",
            args.sandbox_permissions.as_deref(),
            args.with_escalated_permissions,
        ),
    ) {
        (Ok(argv), Ok(escalation)) => (argv, escalation),
        (Err(message), _) | (_, Err(message)) => return ToolOutcome::error(message),
    };
    // Same gate as `shell`: rules, approval, then the sandbox. A session cannot be retried,
    // so a sandbox denial is reported, not escalated.
    let reason = args.approval_reason();
    let decision = match crate::tool_orchestrator::exec_flow::decide(
        &ctx,
        &argv,
        &cwd,
        escalation,
        reason.as_deref(),
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
    // With the network off, the command's own proxy (when configured) is its way out; it
    // lives as long as the session.
    let proxy = match crate::tool_orchestrator::network_approval::start_for(&ctx, &profile, &argv) {
        Ok(proxy) => proxy,
        Err(why) => {
            ctx.services.tell(EventMsg::Warning {
                message: format!("{why}; the command runs without network"),
            });
            None
        }
    };
    let spawn_argv = match crate::sandbox_linux::confine_argv(
        ctx.settings.sandbox.backend,
        &profile,
        &cwd,
        &argv,
        proxy.as_ref().map(|p| p.bridge.clone()),
    ) {
        Ok(spawn_argv) => spawn_argv,
        Err(why) => {
            return ToolOutcome::error(format!("no sandbox available, command not run: {why}"))
        }
    };
    let mut env = spawn_env(&ctx.settings);
    // A plain terminal: no pagers waiting for a key, no colour codes in the output.
    for (key, value) in [
        ("TERM", "dumb"),
        ("PAGER", "cat"),
        ("GIT_PAGER", "cat"),
        ("NO_COLOR", "1"),
    ] {
        env.insert(key.into(), value.into());
    }
    if let Some(proxy) = &proxy {
        env.extend(proxy.env());
    }
    let spawn_argv = supervise_if_unconfined(&profile, spawn_argv, &cwd, &env);
    // Begin and end go the same way (straight to the session), so the end never overtakes.
    let exec = &ctx.services.exec;
    exec.begin(&ctx.call.call_id, &argv, &cwd);
    let started = Instant::now();
    let live = ctx.services.pty_output_sink(&ctx.call.call_id);
    let spawn = if args.tty == Some(true) {
        PtySession::spawn
    } else {
        PtySession::spawn_piped
    };
    let spawned = spawn(
        &spawn_argv,
        &argv,
        &cwd,
        &env,
        ctx.call.call_id.clone(),
        Some(live),
    );
    let session = match spawned {
        Ok(session) => {
            if let Some(proxy) = proxy {
                session.keep_alive(Box::new(proxy));
            }
            session
        }
        Err(message) => {
            exec.abandon(&ctx.call.call_id);
            exec.tell(EventMsg::ExecCommandEnd {
                call_id: ctx.call.call_id.clone(),
                command: argv,
                exit_code: None,
                aggregated_output: message.clone(),
                duration_ms: 0,
                timed_out: false,
                user_shell: false,
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

/// An unconfined session has no sandbox whose end takes its processes along: it runs under
/// the supervisor, so what it starts dies with troupe even when troupe is killed outright.
/// The spawner already gives it its own session (PTY) or group (pipes), which it keeps.
fn supervise_if_unconfined(
    profile: &troupe_messages::policy::PermissionProfile,
    argv: Vec<String>,
    cwd: &std::path::Path,
    env: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    use troupe_messages::policy::PermissionProfile;
    use troupe_sandbox::supervisor::{supervised_argv, Placement};
    if !matches!(
        profile,
        PermissionProfile::Disabled | PermissionProfile::External { .. }
    ) {
        return argv;
    }
    let Some(program) = argv.first() else {
        return argv;
    };
    let path_var = env.get("PATH").map(std::ffi::OsStr::new);
    // A program that cannot be found stays as it was, so starting it fails as before.
    troupe_sandbox::spawn_trampoline::resolve_program(std::ffi::OsStr::new(program), cwd, path_var)
        .and_then(|resolved| supervised_argv(Placement::Keep, &resolved, &argv))
        .unwrap_or(argv)
}
