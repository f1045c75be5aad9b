//! Asking the user, shared by every tool that needs approval (shell commands, patches): the
//! session cache first, then a request event to the session and a wait for the decision,
//! which the session delivers in one hop by resolving the call's entry in `PendingApprovals`.

use super::contract::{ToolContext, ToolOutcome};
use crate::approvals::cache::ApprovalKey;
use crate::approvals::requirement::{ApprovalRequirement, SANDBOX_PROMPT_DISALLOWED};
use crate::locking::lock;
use std::path::PathBuf;
use troupe_apply_patch::beneath::canonical;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::policy::{AskForApproval, FileSystemSandboxKind, PermissionProfile};
use troupe_messages::tools::REJECTED_BY_USER;
use troupe_sandbox::profile::is_protected_write;

/// What the model reads when the user says no and what to do instead: the denial, then the
/// user's words, so the model goes on with them in the same turn.
pub fn denied_with_message(message: &str) -> String {
    format!(
        "{REJECTED_BY_USER}. The user said what to do instead:\n{}",
        message.trim()
    )
}

/// Asks with `request` unless the session cache holds every key. `Err` carries the output
/// for the model when the answer is no (or abort, which also ends the turn).
pub async fn approve(
    ctx: &ToolContext,
    request: EventMsg,
    keys: &[ApprovalKey],
) -> Result<(), ToolOutcome> {
    if lock(&ctx.approvals.cache).all_approved(keys) {
        return Ok(());
    }
    if ask(ctx, request).await? == ReviewDecision::ApprovedForSession {
        lock(&ctx.approvals.cache).approve(keys);
    }
    Ok(())
}

/// Asks without looking at the cache: PermissionRequest hooks first (an allow counts as
/// `Approved`), then the user. `Ok` is `Approved` or `ApprovedForSession`; `Err` carries
/// the output for the model (denied, or abort, which also ends the turn).
pub async fn ask(ctx: &ToolContext, request: EventMsg) -> Result<ReviewDecision, ToolOutcome> {
    // PermissionRequest hooks answer before the user is asked; silence asks as usual.
    let description = match &request {
        EventMsg::ExecApprovalRequest { reason, .. }
        | EventMsg::ApplyPatchApprovalRequest { reason, .. } => reason.clone(),
        _ => None,
    };
    match ctx
        .services
        .hooks
        .permission_request(&ctx.call, description)
        .await
    {
        Some(Ok(())) => return Ok(ReviewDecision::Approved),
        Some(Err(message)) => return Err(ToolOutcome::error(message)),
        None => {}
    }
    let decision = ctx.pending.register(&ctx.call.call_id);
    ctx.services.tell(request);
    // A dropped sender means the turn is stopping (interrupt): treat as abort.
    match decision.await.unwrap_or(ReviewDecision::Abort) {
        approved @ (ReviewDecision::Approved
        | ReviewDecision::ApprovedForSession
        | ReviewDecision::ApprovedWithoutSandbox) => Ok(approved),
        ReviewDecision::Denied => Err(ToolOutcome::error(REJECTED_BY_USER)),
        ReviewDecision::DeniedWithMessage { message } => {
            Err(ToolOutcome::error(denied_with_message(&message)))
        }
        // The session stops the turn itself when it delivers an abort.
        ReviewDecision::Abort => Err(ToolOutcome::error("aborted by user")),
    }
}

/// The requirement for a patch writing `files` (absolute): the policy × sandbox table of
/// `default_requirement`, with the
/// granular `patch_approval` switch in place of the sandbox one, except that a patch kept
/// inside the writable roots needs no approval unless the policy is `untrusted`.
pub fn patch_requirement(
    policy: AskForApproval,
    profile: &PermissionProfile,
    files: &[PathBuf],
) -> ApprovalRequirement {
    let fs_kind = profile.file_system_kind();
    let inside_roots = match profile {
        PermissionProfile::Managed { file_system, .. } => files.iter().all(|file| {
            file_system
                .writable_roots
                .iter()
                .any(|w| file.starts_with(&w.root) && !is_protected_write(w, file))
        }),
        PermissionProfile::Disabled | PermissionProfile::External { .. } => true,
    };
    let policy = match policy {
        // The patch switch decides for patches.
        AskForApproval::Granular(mut cfg) => {
            cfg.sandbox_approval = cfg.patch_approval;
            AskForApproval::Granular(cfg)
        }
        other => other,
    };
    let needs_table = !inside_roots || policy == AskForApproval::UnlessTrusted;
    if !needs_table {
        return ApprovalRequirement::Skip {
            bypass_sandbox: false,
        };
    }
    match crate::approvals::requirement::default_requirement(policy, fs_kind) {
        ApprovalRequirement::Forbidden { reason } if reason == SANDBOX_PROMPT_DISALLOWED => {
            ApprovalRequirement::Forbidden {
                reason: "approval policy disallowed patch approval prompt".into(),
            }
        }
        // Outside the roots under a policy that never asks: the sandbox cannot confine an
        // in-process write, so refuse rather than write outside.
        ApprovalRequirement::Skip { .. } if fs_kind == FileSystemSandboxKind::Restricted => {
            ApprovalRequirement::Forbidden {
                reason: "the patch writes outside the writable roots".into(),
            }
        }
        other => other,
    }
}

/// The gate a patch tool calls before writing `files` (absolute paths): decides, asks with
/// an `ApplyPatchApprovalRequest` (one cache key per file), or refuses. Paths are judged as
/// they resolve now (symlinks followed); a tool that writes in-process must also write
/// beneath what was judged, as `apply_patch` does.
pub async fn approve_patch(
    ctx: &ToolContext,
    files: &[PathBuf],
    reason: Option<String>,
) -> Result<(), ToolOutcome> {
    let profile = super::permissions::effective_profile(ctx)?;
    let files: Vec<PathBuf> = files.iter().map(|f| canonical(f)).collect();
    approve_resolved_patch(ctx, &profile, &files, reason).await
}

/// [`approve_patch`] for paths already resolved under `profile` (`apply_patch` located them
/// and will write exactly there).
pub async fn approve_resolved_patch(
    ctx: &ToolContext,
    profile: &PermissionProfile,
    files: &[PathBuf],
    reason: Option<String>,
) -> Result<(), ToolOutcome> {
    match patch_requirement(ctx.settings.approval_policy, profile, files) {
        ApprovalRequirement::Skip { .. } => Ok(()),
        ApprovalRequirement::Forbidden { reason } => {
            Err(ToolOutcome::error(format!("patch refused: {reason}")))
        }
        ApprovalRequirement::NeedsApproval { .. } => {
            let keys: Vec<ApprovalKey> =
                files.iter().cloned().map(ApprovalKey::PatchFile).collect();
            let request = EventMsg::ApplyPatchApprovalRequest {
                call_id: ctx.call.call_id.clone(),
                files: files.to_vec(),
                reason,
            };
            approve(ctx, request, &keys).await
        }
    }
}

#[cfg(test)]
#[path = "approval_gate_tests.rs"]
mod tests;
