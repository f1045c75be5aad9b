//! `turn/start`'s overrides (Codex's semantics: they hold for this turn and the following
//! ones; `null` keeps the thread's). They are folded into the thread's settings request and
//! resolved through the configuration exactly as a `thread/start` with those settings would
//! be, so `requirements.toml`, trust and every other check of a new thread apply to a wider
//! policy; the session then only copies the resolved values.

use crate::hub::{Hub, LiveThread, SettingsRequest, ThreadSettings};
use crate::methods::approval_policy;
use serde_json::Value;
use std::path::PathBuf;
use troupe_app_server_protocol::protocol::{SandboxPolicyParam, TurnStartParams};
use troupe_messages::policy::SandboxMode;
use troupe_messages::settings::{SessionSettings, TurnSettingsUpdate};

/// Overrides checked and resolved, waiting for the thread's pump to apply them.
#[derive(Debug, Clone)]
pub struct TurnOverrides {
    ask: SettingsRequest,
    resolved: SessionSettings,
    output_schema: Option<Value>,
}

impl TurnOverrides {
    /// What the session copies.
    pub fn update(&self) -> TurnSettingsUpdate {
        let settings = &self.resolved;
        TurnSettingsUpdate {
            model: settings.model.clone(),
            approval_policy: settings.approval_policy,
            sandbox_mode: settings.sandbox_mode,
            writable_roots: settings.sandbox.writable_roots.clone(),
            network_access: settings.sandbox.network_access,
            exclude_tmpdir_env_var: settings.sandbox.exclude_tmpdir_env_var,
            exclude_slash_tmp: settings.sandbox.exclude_slash_tmp,
            cwd: settings.cwd.clone(),
            reasoning_effort: settings.context.reasoning_effort.clone(),
            output_schema_next_turn: self.output_schema.clone(),
        }
    }

    /// The thread's settings from now on (the output schema is the one turn's only).
    pub fn into_thread_settings(self) -> ThreadSettings {
        ThreadSettings {
            ask: self.ask,
            resolved: self.resolved,
        }
    }
}

/// The `[sandbox_workspace_write]` keys a `workspaceWrite` policy sets.
const WORKSPACE_WRITE_KEYS: &str = "sandbox_workspace_write.";
const EFFORT_KEY: &str = "model_reasoning_effort=";

/// Checks `params`' overrides and resolves the thread's settings with them; `None` when the
/// request changes nothing.
pub fn resolve(
    hub: &Hub,
    live: &LiveThread,
    params: &TurnStartParams,
) -> Result<Option<TurnOverrides>, String> {
    refuse_unsupported(params)?;
    let changes_settings = params.model.is_some()
        || params.cwd.is_some()
        || params.approval_policy.is_some()
        || params.sandbox_policy.is_some()
        || params.effort.is_some();
    if !changes_settings && params.output_schema.is_none() {
        return Ok(None);
    }
    let current = live.current();
    let mut ask = current.ask;
    if changes_settings {
        apply(&mut ask, params)?;
    }
    let resolved = if changes_settings {
        hub.settings(&ask).map_err(|err| err.to_string())?
    } else {
        current.resolved
    };
    Ok(Some(TurnOverrides {
        ask,
        resolved,
        output_schema: params.output_schema.clone().filter(|s| !s.is_null()),
    }))
}

/// Folds the overrides into the thread's settings request.
fn apply(ask: &mut SettingsRequest, params: &TurnStartParams) -> Result<(), String> {
    if let Some(model) = &params.model {
        ask.model = Some(model.clone());
    }
    if let Some(cwd) = &params.cwd {
        ask.cwd = Some(PathBuf::from(cwd));
    }
    if let Some(policy) = params.approval_policy {
        ask.approval_policy = Some(approval_policy(policy));
    }
    if let Some(effort) = &params.effort {
        ask.raw.retain(|line| !line.starts_with(EFFORT_KEY));
        ask.raw
            .push(format!("{EFFORT_KEY}{}", Value::String(effort.clone())));
    }
    apply_sandbox_policy(ask, params.sandbox_policy.as_ref())
}

/// Folds a requested sandbox policy into a settings request (`turn/start`, `command/exec`).
pub fn apply_sandbox_policy(
    ask: &mut SettingsRequest,
    policy: Option<&SandboxPolicyParam>,
) -> Result<(), String> {
    match policy {
        None => {}
        Some(SandboxPolicyParam::DangerFullAccess) => {
            ask.sandbox_mode = Some(SandboxMode::DangerFullAccess)
        }
        Some(SandboxPolicyParam::ReadOnly { network_access }) => {
            if *network_access {
                return Err(
                    "Invalid request: Troupe's read-only sandbox has no network access; use workspaceWrite with networkAccess"
                        .into(),
                );
            }
            ask.sandbox_mode = Some(SandboxMode::ReadOnly);
        }
        Some(SandboxPolicyParam::ExternalSandbox { .. }) => {
            return Err(
                "Invalid request: sandboxPolicy externalSandbox is not supported: Troupe always confines commands itself"
                    .into(),
            )
        }
        Some(SandboxPolicyParam::WorkspaceWrite {
            writable_roots,
            network_access,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
        }) => {
            ask.sandbox_mode = Some(SandboxMode::WorkspaceWrite);
            ask.raw.retain(|line| !line.starts_with(WORKSPACE_WRITE_KEYS));
            let roots: Vec<Value> = writable_roots
                .iter()
                .map(|root| Value::String(root.clone()))
                .collect();
            ask.raw.push(format!(
                "{WORKSPACE_WRITE_KEYS}writable_roots={}",
                Value::Array(roots)
            ));
            ask.raw.push(format!(
                "{WORKSPACE_WRITE_KEYS}network_access={network_access}"
            ));
            ask.raw.push(format!(
                "{WORKSPACE_WRITE_KEYS}exclude_tmpdir_env_var={exclude_tmpdir_env_var}"
            ));
            ask.raw.push(format!(
                "{WORKSPACE_WRITE_KEYS}exclude_slash_tmp={exclude_slash_tmp}"
            ));
        }
    }
    Ok(())
}

/// Overrides Troupe has no meaning for are refused when set (never silently ignored).
fn refuse_unsupported(params: &TurnStartParams) -> Result<(), String> {
    if let Some(reviewer) = params.approvals_reviewer.as_deref() {
        if reviewer != "user" {
            return Err(format!(
                "Invalid request: approvalsReviewer `{reviewer}` is not supported: Troupe sends every approval to the client (`user`)"
            ));
        }
    }
    if params.summary.is_some() {
        return Err(
            "Invalid request: summary is not supported: Troupe requests no reasoning summary mode; leave it null"
                .into(),
        );
    }
    if params.service_tier.is_some() || params.service_tier_for_turn.is_some() {
        return Err(
            "Invalid request: serviceTier is not supported: Troupe sends no service tier; leave it null"
                .into(),
        );
    }
    Ok(())
}
