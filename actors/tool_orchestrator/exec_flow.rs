//! One shell call, in the fixed order Codex uses: approval → choose the sandbox →
//! attempt → on a sandbox denial, a retry (only where the policy allows): unconfined without
//! asking when the first approval covered it, else asked once — for the one directory or the
//! network that was missing, or for no sandbox (`sandbox_retry.rs`).

use super::approval_gate::approve;
use super::registry::{ToolContext, ToolOutcome};
use super::shell_env::spawn_env;
use super::tools::shell::ShellToolArgs;
use super::tools::shell::{format_for_model, REPLY_GRACE};
use crate::approvals::cache::command_key;
use crate::approvals::requirement::{
    command_requirement, escalation_rejection, retry_requirement, ApprovalRequirement, CommandFacts,
};
use crate::approvals::safe_commands::{is_known_safe, is_safe_simple};
use crate::locking::lock;
use std::path::PathBuf;
use std::time::Duration;
use troupe_messages::events::EventMsg;
use troupe_messages::mailboxes::SandboxMsg;
use troupe_messages::policy::CollaborationMode;
use troupe_messages::policy::{FileSystemSandboxKind, PermissionProfile};
use troupe_messages::shell_split::analyze;
use troupe_messages::tools::{ExecRequest, ExecResult};
use troupe_sandbox::profile::{escalated, is_likely_sandbox_denial};

/// What the approval stage decided for a command.
pub struct Decision {
    /// The profile of the session's sandbox policy.
    pub profile: PermissionProfile,
    /// Run the first attempt unconfined (an allow rule, or an approved escalation).
    pub bypass_first: bool,
    /// The user (or the session cache) approved this command.
    pub approved: bool,
    /// The command's session-cache key.
    pub keys: Vec<crate::approvals::cache::ApprovalKey>,
}

/// Stages 1–4 for any command tool (`shell`, `exec_command`): profile, escalation check,
/// rules, requirement, approval. `Err` is the output for the model.
pub async fn decide(
    ctx: &ToolContext,
    command: &[String],
    cwd: &std::path::Path,
    escalation: bool,
    justification: Option<&str>,
) -> Result<Decision, ToolOutcome> {
    let settings = &ctx.settings;
    let policy = settings.approval_policy;
    let profile = super::permissions::effective_profile(ctx)?;
    let plan_mode = settings.context.collaboration_mode == CollaborationMode::Plan;
    if escalation {
        if plan_mode {
            return Err(ToolOutcome::error(PLAN_MODE_NO_ESCALATION));
        }
        if let Some(message) = escalation_rejection(policy) {
            return Err(ToolOutcome::error(message));
        }
    }
    // Forbidden/prompt rules see every command found anywhere in the script; an allow rule
    // counts only when the script is fully understood and every part is covered.
    let analysis = analyze(command);
    let rule = ctx.approvals.rules.evaluate_command(
        &analysis.commands,
        &analysis.wrapped,
        analysis.plain,
        is_safe_simple,
    );
    let facts = CommandFacts {
        policy,
        fs_kind: profile.file_system_kind(),
        rule,
        escalation: escalation.then_some(justification),
        known_safe: is_known_safe(command),
    };
    let keys = vec![command_key(command)];
    let (bypass_first, approved) = match command_requirement(&facts) {
        ApprovalRequirement::Forbidden { reason } => {
            return Err(ToolOutcome::error(format!("command refused: {reason}")));
        }
        ApprovalRequirement::Skip { bypass_sandbox } => (bypass_sandbox, false),
        ApprovalRequirement::NeedsApproval { reason } => {
            let request = EventMsg::ExecApprovalRequest {
                call_id: ctx.call.call_id.clone(),
                command: command.to_vec(),
                cwd: cwd.to_path_buf(),
                reason,
                sandbox_retry: None,
            };
            approve(ctx, request, &keys).await?;
            // An approved escalation runs unconfined at once; an approved rule prompt or an
            // untrusted command still runs sandboxed first.
            (escalation, true)
        }
    };
    Ok(Decision {
        profile,
        // Plan mode only looks: even an allow rule does not take a command out of the sandbox.
        bypass_first: bypass_first && !plan_mode,
        approved,
        keys,
    })
}

/// Why a plan-mode command is never run outside the read-only sandbox.
pub const PLAN_MODE_NO_ESCALATION: &str = "plan mode: commands run read-only and cannot be \
escalated; investigate without changing anything and propose the change in your plan";

/// Whether a command tool's call asks to run outside the sandbox: `sandbox_permissions`
/// (`"require_escalated"` or `"use_default"`), or the legacy `with_escalated_permissions`.
pub fn wants_escalation(
    tool: &str,
    sandbox_permissions: Option<&str>,
    with_escalated_permissions: Option<bool>,
) -> Result<bool, String> {
    match sandbox_permissions {
        None | Some("use_default") => Ok(with_escalated_permissions == Some(true)),
        Some("require_escalated") => Ok(true),
        Some(other) => Err(format!(
            "{tool}: `sandbox_permissions` must be \"use_default\" or \"require_escalated\"; \
             got {other:?}"
        )),
    }
}

/// Runs a validated shell call through approval and the sandbox.
pub async fn run(ctx: &ToolContext, args: &ShellToolArgs, cwd: PathBuf) -> ToolOutcome {
    let policy = ctx.settings.approval_policy;
    let escalation = match wants_escalation(
        "shell",
        args.sandbox_permissions.as_deref(),
        args.with_escalated_permissions,
    ) {
        Ok(escalation) => escalation,
        Err(message) => return ToolOutcome::error(message),
    };
    let decision = match decide(
        ctx,
        &args.command,
        &cwd,
        escalation,
        args.justification.as_deref(),
    )
    .await
    {
        Ok(decision) => decision,
        Err(outcome) => return outcome,
    };
    let Decision {
        profile,
        bypass_first,
        approved,
        keys: key,
    } = decision;
    let fs_kind = profile.file_system_kind();
    let first_profile = if bypass_first {
        escalated(&profile)
    } else {
        profile.clone()
    };
    let first = attempt(ctx, args, &cwd, &first_profile).await;
    let sandboxed = first_profile.file_system_kind() == FileSystemSandboxKind::Restricted;
    let denied = match &first {
        Ok(exec) => sandboxed && is_likely_sandbox_denial(exec.exit_code, &exec.aggregated_output),
        Err(_) => false,
    };
    if !denied {
        return outcome(first, args, ctx);
    }
    if ctx.settings.context.collaboration_mode == CollaborationMode::Plan {
        let mut result = outcome(first, args, ctx);
        result.content = format!("{}\n({PLAN_MODE_NO_ESCALATION})", result.content);
        return result;
    }
    let already = approved || lock(&ctx.approvals.cache).all_approved(&key);
    match retry_requirement(policy, fs_kind, already) {
        ApprovalRequirement::Forbidden { reason } => {
            let mut result = outcome(first, args, ctx);
            result.content = format!(
                "{}\n(the sandbox blocked this command; not retried: {reason})",
                result.content
            );
            result
        }
        ApprovalRequirement::Skip { .. } => {
            let second = attempt(ctx, args, &cwd, &escalated(&profile)).await;
            outcome(second, args, ctx)
        }
        // What to ask (the one thing missing, or no sandbox) is decided from the failure.
        ApprovalRequirement::NeedsApproval { .. } => {
            super::sandbox_retry::ask_and_retry(ctx, args, &cwd, &profile, first, &key).await
        }
    }
}

/// One attempt on the backend the profile calls for; failing closed when no sandbox exists.
pub(super) async fn attempt(
    ctx: &ToolContext,
    args: &ShellToolArgs,
    cwd: &std::path::Path,
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
    let timeout = Duration::from_millis(
        args.timeout_ms
            .unwrap_or(ctx.settings.default_shell_timeout_ms),
    );
    // With the network off, the command's own proxy (when configured) is its way out; it
    // lives until this attempt returns.
    let proxy = match super::network_approval::start_for(ctx, profile, &args.command) {
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
    let request = ExecRequest {
        argv: args.command.clone(),
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
        .begin_command(&ctx.call.call_id, &args.command, cwd);
    let output = ctx.services.output_sink(&ctx.call.call_id);
    let spawn = |reply| SandboxMsg::Spawn {
        request: Box::new(request),
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
    report_end(ctx, &args.command, &result);
    result
}

pub(super) fn outcome(
    result: Result<ExecResult, String>,
    args: &ShellToolArgs,
    ctx: &ToolContext,
) -> ToolOutcome {
    let timeout = Duration::from_millis(
        args.timeout_ms
            .unwrap_or(ctx.settings.default_shell_timeout_ms),
    );
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
