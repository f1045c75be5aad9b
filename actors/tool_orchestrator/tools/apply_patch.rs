//! The `apply_patch` tool, and the one path every patch takes (the tool itself, and
//! commands intercepted from `shell` / `exec_command`): check, announce, write, report.

use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use crate::tool_orchestrator::editor_files::ThreadFiles;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    let editor = ctx
        .editor_files
        .as_ref()
        .and_then(|files| files.for_thread(ctx.thread_id));
    let buffers = match &editor {
        Some(editor) => match editor_buffers(editor, &patch, &cwd, &confinement).await {
            Ok(buffers) => buffers,
            Err(outcome) => return outcome,
        },
        None => BTreeMap::new(),
    };
    let prepare_cwd = cwd.clone();
    let prepared = tokio::task::spawn_blocking(move || {
        apply_patch::prepare_over(&patch, &prepare_cwd, &confinement, buffers)
    })
    .await;
    let plan = match prepared {
        Ok(Ok(plan)) => plan,
        Ok(Err(error)) => return ToolOutcome::error(error.to_string()),
        Err(join) => return ToolOutcome::error(format!("apply_patch crashed: {join}")),
    };
    let touched: Vec<PathBuf> = plan
        .targets
        .values()
        .map(troupe_apply_patch::beneath::Located::path)
        .collect();
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
    // The editor takes whole-file texts only: a patch that deletes or moves a file is
    // written on disk, as without an editor.
    let editor = editor.filter(|_| {
        plan.files
            .values()
            .all(|state| matches!(state, FinalState::Present(_)))
    });
    let written = match editor {
        Some(editor) => {
            let result = write_through_editor(editor.as_ref(), &plan).await;
            Ok((plan, result))
        }
        None => {
            tokio::task::spawn_blocking(move || {
                let result = apply_patch::commit::commit(&plan).map_err(|err| err.to_string());
                (plan, result)
            })
            .await
        }
    };
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
        Ok((_, Err(error))) => (ToolOutcome::error(error), None),
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

/// The editor's texts of the files the patch reads (unsaved buffers included), for those
/// the thread's confinement lets it touch; files the editor does not have are read from disk.
async fn editor_buffers(
    editor: &Arc<dyn ThreadFiles>,
    patch: &str,
    cwd: &Path,
    confinement: &Confinement,
) -> Result<BTreeMap<PathBuf, String>, ToolOutcome> {
    let (patch, cwd, confinement) = (patch.to_string(), cwd.to_path_buf(), confinement.clone());
    let paths =
        tokio::task::spawn_blocking(move || apply_patch::files_read(&patch, &cwd, &confinement))
            .await
            .map_err(|join| ToolOutcome::error(format!("apply_patch crashed: {join}")))?;
    let mut buffers = BTreeMap::new();
    for path in paths {
        match editor.read_text(path.clone()).await {
            Ok(Some(text)) => {
                buffers.insert(path, text);
            }
            Ok(None) => {}
            Err(err) => {
                return Err(ToolOutcome::error(format!(
                    "the editor could not read {}: {err}",
                    path.display()
                )))
            }
        }
    }
    Ok(buffers)
}

/// Hands every final text to the editor, at the path the plan located under the writable
/// roots. Not atomic across files: a failure names the file, earlier ones stay written.
async fn write_through_editor(editor: &dyn ThreadFiles, plan: &Plan) -> Result<(), String> {
    for (path, state) in &plan.files {
        let (Some(target), FinalState::Present(text)) = (plan.targets.get(path), state) else {
            return Err(format!("{} was not located", path.display()));
        };
        editor
            .write_text(target.path(), text.clone())
            .await
            .map_err(|err| format!("the editor could not write {}: {err}", path.display()))?;
    }
    Ok(())
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
