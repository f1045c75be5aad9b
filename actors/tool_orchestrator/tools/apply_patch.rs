//! The `apply_patch` tool, and the one path every patch takes (the tool itself, and
//! commands intercepted from `shell` / `exec_command`): check, announce, write, report.

use crate::tool_orchestrator::registry::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use std::path::PathBuf;
use troupe_apply_patch::{self as apply_patch, ChangeKind, Confinement, FinalState, Plan};
use troupe_messages::events::EventMsg;
use troupe_messages::settings::{ApplyPatchToolType, SessionSettings};
use troupe_messages::tools::{FileChange, FileChangeKind, ToolPayload, ToolSpec};

/// Handler of `apply_patch`, offered freeform or as a JSON function per config.
pub struct ApplyPatchHandler;

/// The patch grammar (Lark), sent with the freeform tool so the model's output is valid.
pub const GRAMMAR: &str = include_str!("apply_patch_grammar.lark");

const DESCRIPTION: &str = "Edits files with a patch. The input is the whole patch: \
`*** Begin Patch`, then one or more of `*** Add File: PATH` (followed by `+` lines), \
`*** Delete File: PATH`, `*** Update File: PATH` (optionally `*** Move to: NEW_PATH`, then \
chunks: an `@@` line, optionally `@@ TEXT` naming a line such as a function header that \
precedes the change, then lines starting with ` ` (context), `-` (remove) or `+` (add); \
`*** End of File` after a chunk that must match at the end of the file), then \
`*** End Patch`. Give about 3 lines of context around each change. Paths are relative to \
the working directory. All files change or none do.";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionArgs {
    input: String,
}

impl ToolHandler for ApplyPatchHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Custom {
            name: "apply_patch".into(),
            description: DESCRIPTION.into(),
            format: json!({"type": "grammar", "syntax": "lark", "definition": GRAMMAR}),
        }
    }

    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        Some(match settings.tools.apply_patch {
            ApplyPatchToolType::Freeform => self.spec(),
            ApplyPatchToolType::Function => ToolSpec::Function {
                name: "apply_patch".into(),
                description: DESCRIPTION.into(),
                strict: false,
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "input": {"type": "string", "description": "The entire patch."}
                    },
                    "required": ["input"],
                    "additionalProperties": false
                }),
            },
        })
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            let patch = match &ctx.call.payload {
                ToolPayload::Custom { input } => input.clone(),
                ToolPayload::Function { arguments } => {
                    match serde_json::from_str::<FunctionArgs>(arguments) {
                        Ok(args) => args.input,
                        Err(err) => {
                            return ToolOutcome::error(format!(
                                "invalid arguments for apply_patch: {err}; expected \
                                 {{\"input\": \"*** Begin Patch ...\"}}"
                            ))
                        }
                    }
                }
            };
            let cwd = ctx.settings.cwd.clone();
            apply(&ctx, patch, cwd).await
        })
    }
}

/// Applies `patch` relative to `cwd` for the call in `ctx`: the single path of every patch.
///
/// A patch that does not parse or apply cleanly is an error for the model and emits no
/// events; one that does is announced (`PatchApplyBegin`), written atomically, reported
/// (`PatchApplyEnd`) and added to the turn's diff.
pub async fn apply(ctx: &ToolContext, patch: String, cwd: PathBuf) -> ToolOutcome {
    let profile = match crate::tool_orchestrator::permissions::effective_profile(ctx) {
        Ok(profile) => profile,
        Err(outcome) => return outcome,
    };
    // The patch is written in-process, outside any sandbox: locating every path under the
    // profile (and walking beneath it when writing) plus the approval gate are its guard.
    let confinement = Confinement::for_profile(&profile);
    let prepare_cwd = cwd.clone();
    let prepared = tokio::task::spawn_blocking(move || {
        apply_patch::prepare(&patch, &prepare_cwd, &confinement)
    })
    .await;
    let plan = match prepared {
        Ok(Ok(plan)) => plan,
        Ok(Err(error)) => return ToolOutcome::error(error.to_string()),
        Err(join) => return ToolOutcome::error(format!("apply_patch crashed: {join}")),
    };
    let touched: Vec<PathBuf> = plan.targets.values().map(|at| at.path()).collect();
    if let Err(outcome) = crate::tool_orchestrator::approval_gate::approve_resolved_patch(
        ctx, &profile, &touched, None,
    )
    .await
    {
        return outcome;
    }
    let changes = file_changes(&plan);
    let call_id = ctx.call.call_id.clone();
    tell(
        ctx,
        EventMsg::PatchApplyBegin {
            call_id: call_id.clone(),
            changes: changes.clone(),
        },
    );
    let written = tokio::task::spawn_blocking(move || {
        let result = apply_patch::commit::commit(&plan);
        (plan, result)
    })
    .await;
    let (outcome, plan) = match written {
        Ok((plan, Ok(()))) => {
            let summary = apply_patch::summary(&plan.affected);
            (
                ToolOutcome {
                    content: summary,
                    success: true,
                    parts: Vec::new(),
                },
                Some(plan),
            )
        }
        Ok((_, Err(error))) => (ToolOutcome::error(error.to_string()), None),
        Err(join) => (
            ToolOutcome::error(format!("apply_patch crashed: {join}")),
            None,
        ),
    };
    tell(
        ctx,
        EventMsg::PatchApplyEnd {
            call_id,
            changes,
            success: outcome.success,
            output: outcome.content.clone(),
        },
    );
    if let Some(plan) = plan {
        if let Some(unified_diff) = ctx.services.record_patch(&plan, &cwd) {
            tell(ctx, EventMsg::TurnDiff { unified_diff });
        }
    }
    outcome
}

fn tell(ctx: &ToolContext, msg: EventMsg) {
    ctx.services.tell(msg);
}

/// The plan's changes as the event contract shows them.
pub fn file_changes(plan: &Plan) -> Vec<FileChange> {
    plan.changes
        .iter()
        .map(|change| {
            let (kind, move_path) = match &change.kind {
                ChangeKind::Add => (FileChangeKind::Add, None),
                ChangeKind::Delete => (FileChangeKind::Delete, None),
                ChangeKind::Update { move_to } => (FileChangeKind::Update, move_to.clone()),
            };
            let diff = change_diff(plan, &change.path, &change.kind);
            FileChange {
                path: change.path.clone(),
                kind,
                move_path,
                diff,
            }
        })
        .collect()
}

/// One change's `diff` (see `FileChange::diff`), from the plan's before and after states.
fn change_diff(plan: &Plan, path: &std::path::Path, kind: &ChangeKind) -> String {
    let before = || plan.before.get(path).cloned().flatten().unwrap_or_default();
    let after = |at: &std::path::Path| match plan.files.get(at) {
        Some(FinalState::Present(text)) => text.clone(),
        Some(FinalState::Absent) | None => String::new(),
    };
    match kind {
        ChangeKind::Add => after(path),
        ChangeKind::Delete => before(),
        ChangeKind::Update { move_to } => {
            let now = after(move_to.as_deref().unwrap_or(path));
            similar::TextDiff::from_lines(&before(), &now)
                .unified_diff()
                .context_radius(1)
                .to_string()
        }
    }
}
