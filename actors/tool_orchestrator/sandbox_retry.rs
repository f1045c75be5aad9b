//! A command the sandbox refused, asked about again. What it was missing is read from its
//! output (`troupe_sandbox::missing`): a directory it could not write, or the network. When
//! that one addition can be granted (`grants::check_request`: it exists, nothing protected
//! or deny-read, `requirements.toml` allows grants), the user is asked for exactly it —
//! "allow writing to DIR for this session?", "allow network for this session?" — and, once
//! approved, it is granted for the session (recorded as `PermissionsGranted`, as a
//! `request_permissions` grant is) and the command runs again in the sandbox with it.
//! Running it with no sandbox at all stays a separate choice
//! (`ReviewDecision::ApprovedWithoutSandbox`), and is what is asked when nothing specific
//! was recognised.

use super::approval_gate::ask;
use super::contract::{ToolContext, ToolOutcome};
use super::exec_attempt::{attempt, outcome, CommandRequest};
use super::permissions::effective_profile;
use crate::approvals::cache::ApprovalKey;
use crate::locking::lock;
use std::path::Path;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::permissions::{
    FileSystemPermissions, GrantScope, NetworkPermissions, RequestedPermissions, SandboxRetry,
};
use troupe_messages::policy::PermissionProfile;
use troupe_messages::tools::ExecResult;
use troupe_sandbox::grants::check_request;
use troupe_sandbox::missing::{find, Missing};
use troupe_sandbox::profile::escalated;

/// Asks how to run again the command `first` ran (refused by the sandbox of `profile`), and
/// does it; the outcome is the second run's, or the first's with the denial.
pub async fn ask_and_retry(
    ctx: &ToolContext,
    request: &CommandRequest,
    profile: &PermissionProfile,
    first: Result<ExecResult, String>,
    keys: &[ApprovalKey],
) -> ToolOutcome {
    let cwd = request.cwd.as_path();
    let output = match &first {
        Ok(exec) => exec.aggregated_output.clone(),
        Err(_) => String::new(),
    };
    let grant = grantable(ctx, &output, profile, cwd).await;
    let retry = grant
        .as_ref()
        .map_or(SandboxRetry::Unconfined, |(retry, _)| retry.clone());
    let question = EventMsg::ExecApprovalRequest {
        call_id: ctx.call.call_id.clone(),
        command: request.command.clone(),
        cwd: cwd.to_path_buf(),
        reason: Some(retry.question()),
        sandbox_retry: Some(retry),
    };
    let decision = match ask(ctx, question).await {
        Ok(decision) => decision,
        Err(denied) => {
            let mut result = outcome(first, request);
            result.content = format!("{}\n({})", result.content, denied.content);
            return result;
        }
    };
    let second_profile = match (decision, grant) {
        (ReviewDecision::ApprovedWithoutSandbox, _) => escalated(profile),
        (decision, None) => {
            // "Without the sandbox, for the session": later runs of this command skip the
            // question (and, refused again, run unconfined at once).
            if decision == ReviewDecision::ApprovedForSession {
                lock(&ctx.approvals.cache).approve(keys);
            }
            escalated(profile)
        }
        (_, Some((_, granted))) => {
            lock(&ctx.approvals.grants).add(&granted);
            ctx.services.tell(EventMsg::PermissionsGranted {
                call_id: ctx.call.call_id.clone(),
                scope: GrantScope::Session,
                permissions: granted,
            });
            match effective_profile(ctx) {
                Ok(widened) => widened,
                Err(outcome) => return outcome,
            }
        }
    };
    let second = attempt(ctx, request, &second_profile).await;
    outcome(second, request)
}

/// What the failure shows was missing, when it can be granted: the question to ask and the
/// grant (paths made absolute and canonical, as `request_permissions` grants them).
async fn grantable(
    ctx: &ToolContext,
    output: &str,
    profile: &PermissionProfile,
    cwd: &Path,
) -> Option<(SandboxRetry, RequestedPermissions)> {
    let request = match find(output, profile, cwd)? {
        Missing::Write { dir, .. } => RequestedPermissions {
            network: None,
            file_system: Some(FileSystemPermissions {
                read: None,
                write: Some(vec![dir]),
            }),
        },
        Missing::Network => RequestedPermissions {
            network: Some(NetworkPermissions {
                enabled: Some(true),
            }),
            file_system: None,
        },
    };
    let settings = ctx.settings.clone();
    // Canonicalises paths: off the runtime's threads.
    let checked = tokio::task::spawn_blocking(move || {
        check_request(&request, &settings.sandbox, &settings.cwd)
    })
    .await
    .ok()?
    .ok()?;
    let retry = match checked.write_paths().first() {
        Some(dir) => SandboxRetry::Write { dir: dir.clone() },
        None => SandboxRetry::Network,
    };
    Some((retry, checked))
}
