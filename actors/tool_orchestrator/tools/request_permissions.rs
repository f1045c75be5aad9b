//! `request_permissions` (Codex's tool, behind the `request_permissions_tool` feature): the
//! model asks for extra writable directories, read paths or the network, for the rest of the
//! turn or — when the user approves for the session — the rest of the session.
//!
//! The request is checked first (paths exist, nothing deny-read or protected, nothing
//! `requirements.toml` forbids), then asked as an `ExecApprovalRequest` whose command is
//! `request_permissions --write DIR … --read PATH … --network`: `Approved` grants for the
//! turn, `ApprovedForSession` for the session, `Denied` grants nothing. A grant is recorded
//! as `PermissionsGranted` (session grants come back on resume) and widens the profile of
//! every later command and patch (`tool_orchestrator::permissions`).

use crate::locking::lock;
use crate::tool_orchestrator::approval_gate::ask;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use crate::tool_orchestrator::permissions::effective_profile;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::permissions::{GrantScope, RequestedPermissions};
use troupe_messages::policy::{AskForApproval, CollaborationMode};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::REJECTED_BY_USER;
use troupe_messages::tools::{ToolPayload, ToolSpec};
use troupe_sandbox::grants::{already_allowed, check_request};

/// The tool's name.
pub const NAME: &str = "request_permissions";

/// Handler of `request_permissions`.
pub struct RequestPermissionsHandler;

/// Arguments as the model writes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestPermissionsArgs {
    pub permissions: RequestedPermissions,
    #[serde(default)]
    pub reason: Option<String>,
    /// Codex's attached environments; Troupe has only the primary one.
    #[serde(default)]
    pub environment_id: Option<String>,
}

impl ToolHandler for RequestPermissionsHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: NAME.into(),
            description: "Request additional filesystem or network permissions from the user \
and wait for the client to grant a subset of the requested permission profile. Use \
environment_id to target a specific attached environment; omit it to use the primary \
environment. Relative filesystem paths resolve against the selected environment cwd. Granted \
permissions apply automatically to later shell-like commands in the current turn, or for the \
rest of the session if the client approves them at session scope."
                .into(),
            strict: false,
            parameters: parameters(),
        }
    }

    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        settings.tools.request_permissions.then(|| self.spec())
    }

    // A grant changes what later calls of the same response may do: they wait for it.
    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move { request(&ctx).await })
    }
}

/// The JSON schema Codex 0.169 sends (key order as Codex serialises it).
fn parameters() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "environment_id": {
                "type": "string",
                "description": "Environment id from <environment_context>. Omit to use the primary environment."
            },
            "permissions": {
                "type": "object",
                "description": "Filesystem or network access request.",
                "properties": {
                    "file_system": {
                        "type": "object",
                        "description": "Filesystem access request.",
                        "properties": {
                            "read": {
                                "type": "array",
                                "description": "Absolute paths to grant read access; omit when none are needed.",
                                "items": {"type": "string"}
                            },
                            "write": {
                                "type": "array",
                                "description": "Absolute paths to grant write access; omit when none are needed.",
                                "items": {"type": "string"}
                            }
                        },
                        "additionalProperties": false
                    },
                    "network": {
                        "type": "object",
                        "description": "Network access request.",
                        "properties": {
                            "enabled": {
                                "type": "boolean",
                                "description": "True requests network access; false or omitted requests none."
                            }
                        },
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false
            },
            "reason": {
                "type": "string",
                "description": "Optional short explanation for why additional permissions are needed."
            }
        },
        "required": ["permissions"],
        "additionalProperties": false
    })
}

/// Validates the arguments; the error says what is wrong.
pub fn parse_args(payload: &ToolPayload) -> Result<RequestPermissionsArgs, String> {
    let ToolPayload::Function { arguments } = payload else {
        return Err(format!("{NAME} expects JSON function arguments"));
    };
    let args: RequestPermissionsArgs = serde_json::from_str(arguments)
        .map_err(|err| format!("invalid arguments for {NAME}: {err}"))?;
    if let Some(id) = &args.environment_id {
        return Err(format!(
            "unknown environment_id `{id}`: this session has only the primary environment; omit environment_id"
        ));
    }
    Ok(args)
}

/// What the model reads: the permissions granted (explicit `null`s for none) and the scope,
/// as Codex answers.
pub fn answer(granted: &RequestedPermissions, scope: GrantScope) -> String {
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        permissions: &'a RequestedPermissions,
        scope: GrantScope,
    }
    serde_json::to_string(&Answer {
        permissions: granted,
        scope,
    })
    .unwrap_or_else(|err| format!("{{\"error\":\"{err}\"}}"))
}

/// The approval's command text: what would be granted, one flag per permission.
pub fn approval_command(granted: &RequestedPermissions) -> Vec<String> {
    let mut command = vec![NAME.to_string()];
    for path in granted.write_paths() {
        command.push("--write".into());
        command.push(path.display().to_string());
    }
    for path in granted.read_paths() {
        command.push("--read".into());
        command.push(path.display().to_string());
    }
    if granted.wants_network() {
        command.push("--network".into());
    }
    command
}

/// Whether the policy lets this request be asked at all (`never` and granular without
/// sandbox prompts grant nothing, without asking).
fn may_ask(policy: AskForApproval) -> bool {
    match policy {
        AskForApproval::Never => false,
        AskForApproval::Granular(cfg) => cfg.sandbox_approval,
        AskForApproval::UnlessTrusted | AskForApproval::OnRequest | AskForApproval::OnFailure => {
            true
        }
    }
}

async fn request(ctx: &ToolContext) -> ToolOutcome {
    let args = match parse_args(&ctx.call.payload) {
        Ok(args) => args,
        Err(message) => return ToolOutcome::error(message),
    };
    if ctx.settings.context.collaboration_mode == CollaborationMode::Plan {
        return ToolOutcome::error(
            "plan mode: commands run read-only; no permission can be granted until the plan is carried out",
        );
    }
    let settings = ctx.settings.clone();
    let checked = tokio::task::spawn_blocking(move || {
        check_request(&args.permissions, &settings.sandbox, &settings.cwd)
    })
    .await;
    let granted = match checked {
        Ok(Ok(granted)) => granted,
        Ok(Err(err)) => return ToolOutcome::error(format!("{NAME}: {err}")),
        Err(join) => return ToolOutcome::error(format!("{NAME} crashed: {join}")),
    };
    let profile = match effective_profile(ctx) {
        Ok(profile) => profile,
        Err(outcome) => return outcome,
    };
    // Nothing new: the thread already has all of it; nobody is asked, nothing recorded.
    if already_allowed(&profile, &granted) && granted.read_paths().is_empty() {
        return ToolOutcome::ok(answer(&granted, GrantScope::Turn));
    }
    let nothing = ToolOutcome::ok(answer(&RequestedPermissions::default(), GrantScope::Turn));
    if !may_ask(ctx.settings.approval_policy) {
        return nothing;
    }
    let request = EventMsg::ExecApprovalRequest {
        call_id: ctx.call.call_id.clone(),
        command: approval_command(&granted),
        cwd: ctx.settings.cwd.clone(),
        reason: args.reason.clone(),
        sandbox_retry: None,
    };
    let scope = match ask(ctx, request).await {
        Ok(ReviewDecision::ApprovedForSession) => GrantScope::Session,
        Ok(_) => GrantScope::Turn,
        // The user said no: nothing granted, answered as Codex does.
        Err(outcome) if outcome.content == REJECTED_BY_USER => return nothing,
        Err(outcome) => return outcome,
    };
    match scope {
        GrantScope::Session => lock(&ctx.approvals.grants).add(&granted),
        GrantScope::Turn => lock(&ctx.services.turn_grants).add(&granted),
    }
    ctx.services.tell(EventMsg::PermissionsGranted {
        call_id: ctx.call.call_id.clone(),
        scope,
        permissions: granted.clone(),
    });
    ToolOutcome::ok(answer(&granted, scope))
}

#[cfg(test)]
#[path = "request_permissions_tests.rs"]
mod tests;
