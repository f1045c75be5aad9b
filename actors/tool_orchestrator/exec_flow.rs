//! One shell call, in the fixed order Codex uses: approval → choose the sandbox →
//! attempt → on a sandbox denial, a retry (only where the policy allows): unconfined without
//! asking when the first approval covered it, else asked once — for the one directory or the
//! network that was missing, or for no sandbox (`sandbox_retry.rs`).

use super::approval_gate::approve;
use super::contract::{ToolContext, ToolOutcome};
use super::exec_attempt::{attempt, outcome};
use crate::approvals::cache::command_key;
use crate::approvals::requirement::{
    command_requirement, escalation_rejection, retry_requirement, ApprovalRequirement, CommandFacts,
};
use crate::approvals::safe_commands::{is_known_safe, is_safe_simple};
use crate::locking::lock;
use troupe_messages::events::EventMsg;
use troupe_messages::policy::CollaborationMode;
use troupe_messages::policy::{FileSystemSandboxKind, PermissionProfile};
use troupe_messages::shell_split::analyze;
use troupe_sandbox::profile::{escalated, is_likely_sandbox_denial};

pub use super::exec_attempt::CommandRequest;

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

/// Runs a command (a validated `shell` call) through approval and the sandbox.
pub async fn run(ctx: &ToolContext, request: &CommandRequest) -> ToolOutcome {
    let policy = ctx.settings.approval_policy;
    let decision = match decide(
        ctx,
        &request.command,
        &request.cwd,
        request.escalation,
        request.justification.as_deref(),
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
    let first = attempt(ctx, request, &first_profile).await;
    let sandboxed = first_profile.file_system_kind() == FileSystemSandboxKind::Restricted;
    let denied = match &first {
        Ok(exec) => sandboxed && is_likely_sandbox_denial(exec.exit_code, &exec.aggregated_output),
        Err(_) => false,
    };
    if !denied {
        return outcome(first, request);
    }
    if ctx.settings.context.collaboration_mode == CollaborationMode::Plan {
        let mut result = outcome(first, request);
        result.content = format!("{}\n({PLAN_MODE_NO_ESCALATION})", result.content);
        return result;
    }
    let already = approved || lock(&ctx.approvals.cache).all_approved(&key);
    match retry_requirement(policy, fs_kind, already) {
        ApprovalRequirement::Forbidden { reason } => {
            let mut result = outcome(first, request);
            result.content = format!(
                "{}\n(the sandbox blocked this command; not retried: {reason})",
                result.content
            );
            result
        }
        ApprovalRequirement::Skip { .. } => {
            let second = attempt(ctx, request, &escalated(&profile)).await;
            outcome(second, request)
        }
        // What to ask (the one thing missing, or no sandbox) is decided from the failure.
        ApprovalRequirement::NeedsApproval { .. } => {
            super::sandbox_retry::ask_and_retry(ctx, request, &profile, first, &key).await
        }
    }
}

#[cfg(test)]
#[path = "exec_flow_tests.rs"]
mod tests;
