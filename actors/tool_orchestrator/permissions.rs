//! The permission profile a call runs under: the session's sandbox settings widened by the
//! `request_permissions` grants the thread holds (for the session, and for this turn).

use super::contract::{ToolContext, ToolOutcome};
use crate::locking::lock;
use troupe_messages::permissions::PermissionGrants;
use troupe_messages::policy::{CollaborationMode, PermissionProfile};
use troupe_sandbox::grants::widen;
use troupe_sandbox::profile::resolve_profile;

/// Every grant in force for this call: the session's and the turn's.
pub fn current_grants(ctx: &ToolContext) -> PermissionGrants {
    let mut grants = lock(&ctx.approvals.grants).clone();
    grants.extend(&lock(&ctx.services.turn_grants));
    grants
}

/// The profile for a call of `ctx`'s turn. Plan mode ignores grants (it only looks).
pub fn effective_profile(ctx: &ToolContext) -> Result<PermissionProfile, ToolOutcome> {
    let settings = &ctx.settings;
    let profile = resolve_profile(settings.sandbox_mode, &settings.sandbox, &settings.cwd)
        .map_err(|err| ToolOutcome::error(format!("sandbox configuration error: {err}")))?;
    if settings.context.collaboration_mode == CollaborationMode::Plan {
        return Ok(profile);
    }
    Ok(widen(
        profile,
        &current_grants(ctx),
        &settings.sandbox,
        &settings.cwd,
    ))
}
