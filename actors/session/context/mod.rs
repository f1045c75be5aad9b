//! The initial context of a thread, assembled once in a fixed order and then never rewritten:
//! permissions (developer), user + project instructions (user), skills (developer),
//! environment (user). Base instructions travel separately as the request's `instructions`.
//! Later changes of model, cwd, approvals or sandbox are appended as new items.

pub mod agents_md;
pub mod bounded_read;
pub mod budget;
pub mod skills;

use agents_md::{discover, DiscoveryOptions};
use skills::{discover_skills, skills_list, Skill, LIST_BUDGET_BYTES};
use troupe_config::layers::project_root;
use troupe_messages::items::ResponseItem;
use troupe_messages::policy::{AskForApproval, CollaborationMode, SandboxMode};
use troupe_messages::settings::SessionSettings;

/// The initial items and the warnings met while reading instructions.
#[derive(Debug, Clone, Default)]
pub struct InitialContext {
    pub items: Vec<ResponseItem>,
    pub warnings: Vec<String>,
    /// Skills listed to the model; a `$name` mention attaches the body.
    pub skills: Vec<Skill>,
}

/// Builds the initial context for `settings` (reads AGENTS.md files).
pub fn initial_context(settings: &SessionSettings) -> InitialContext {
    let mut context = InitialContext::default();
    context
        .items
        .push(ResponseItem::developer_text(permissions_text(settings)));
    if let Some(text) = &settings.context.developer_instructions {
        context
            .items
            .push(ResponseItem::developer_text(text.clone()));
    }
    if settings.context.collaboration_mode == CollaborationMode::Plan {
        context.items.push(ResponseItem::developer_text(mode_text(
            CollaborationMode::Plan,
        )));
    }
    let instructions = discover(&DiscoveryOptions {
        cwd: &settings.cwd,
        root_markers: &settings.context.project_root_markers,
        fallback_filenames: &settings.context.project_doc_fallback_filenames,
        max_bytes: settings.context.project_doc_max_bytes,
        user_dir: Some(&settings.troupe_home),
    });
    context.warnings.extend(instructions.warnings);
    if let Some(text) = instructions.text {
        context.items.push(ResponseItem::user_text(format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{text}\n</INSTRUCTIONS>",
            settings.cwd.display()
        )));
    }
    let root = project_root(&settings.cwd, &settings.context.project_root_markers);
    let found = discover_skills(&[
        settings.troupe_home.join("skills"),
        root.join(".agents").join("skills"),
    ]);
    context.warnings.extend(found.warnings);
    if let Some(list) = skills_list(&found.skills, LIST_BUDGET_BYTES) {
        context.items.push(ResponseItem::developer_text(list));
    }
    context.skills = found.skills;
    context
        .items
        .push(ResponseItem::user_text(environment_context(settings)));
    context
}

/// The `<environment_context>` message: where and under which rules the agent works.
pub fn environment_context(settings: &SessionSettings) -> String {
    let shell = std::env::var("SHELL")
        .ok()
        .and_then(|s| s.rsplit('/').next().map(str::to_string))
        .unwrap_or_else(|| "sh".to_string());
    format!(
        "<environment_context>\n  <cwd>{}</cwd>\n  <approval_policy>{}</approval_policy>\n  \
         <sandbox_mode>{}</sandbox_mode>\n  <network_access>{}</network_access>\n  \
         <shell>{shell}</shell>\n  <current_date>{}</current_date>\n</environment_context>",
        settings.cwd.display(),
        approval_name(settings.approval_policy),
        settings.sandbox_mode.as_str(),
        if settings.sandbox_mode == SandboxMode::DangerFullAccess {
            "enabled"
        } else {
            "restricted"
        },
        chrono::Local::now().format("%Y-%m-%d"),
    )
}

/// What the model is told about a collaboration mode.
pub fn mode_text(mode: CollaborationMode) -> String {
    match mode {
        CollaborationMode::Plan => {
            "<collaboration_mode>plan</collaboration_mode>\nYou are in plan \
            mode. Investigate with read-only commands only, then answer with a concrete, \
            numbered plan (files to change, steps, how to verify). Do not modify files or run \
            commands that change state; the user will switch modes to carry the plan out."
                .to_string()
        }
        CollaborationMode::Default => "<collaboration_mode>default</collaboration_mode>\nPlan \
            mode has ended: you may now carry out the work, including changes."
            .to_string(),
    }
}

/// The items that tell the model what changed since `before`: a mode switch (developer) and
/// an `<environment_context>` update (user). Empty when nothing it was told has changed.
pub fn context_updates(before: &SessionSettings, after: &SessionSettings) -> Vec<ResponseItem> {
    let mut items = Vec::new();
    if before.context.collaboration_mode != after.context.collaboration_mode {
        items.push(ResponseItem::developer_text(mode_text(
            after.context.collaboration_mode,
        )));
    }
    items.extend(context_update(before, after));
    items
}

/// An `<environment_context>` update, when something the model was told has changed.
pub fn context_update(before: &SessionSettings, after: &SessionSettings) -> Option<ResponseItem> {
    let changed = before.cwd != after.cwd
        || before.approval_policy != after.approval_policy
        || before.sandbox_mode != after.sandbox_mode
        || before.model != after.model;
    changed.then(|| {
        let mut text = environment_context(after);
        if before.model != after.model {
            text.push_str(&format!(
                "\n<model_switch>The model is now `{}` (was `{}`).</model_switch>",
                after.model, before.model
            ));
        }
        ResponseItem::user_text(text)
    })
}

fn approval_name(policy: AskForApproval) -> &'static str {
    match policy {
        AskForApproval::UnlessTrusted => "untrusted",
        AskForApproval::OnRequest => "on-request",
        AskForApproval::OnFailure => "on-failure",
        AskForApproval::Never => "never",
        AskForApproval::Granular(_) => "granular",
    }
}

/// The developer message that tells the model what it may do without asking.
pub fn permissions_text(settings: &SessionSettings) -> String {
    let sandbox = match settings.sandbox_mode {
        SandboxMode::ReadOnly => {
            "The sandbox only permits reading files; commands cannot write anywhere."
        }
        SandboxMode::WorkspaceWrite => {
            "The sandbox permits reading files and writing inside the workspace (cwd and \
             configured writable roots) and temp directories; `.git` stays read-only."
        }
        SandboxMode::DangerFullAccess => {
            "No sandbox: commands run with the user's full permissions, network included."
        }
    };
    let approval = match settings.approval_policy {
        AskForApproval::UnlessTrusted => {
            "Commands other than known-safe read-only ones need the user's approval."
        }
        AskForApproval::OnRequest => {
            "Run commands in the sandbox; when one needs more (writing outside the workspace, \
             network), set `sandbox_permissions` to `require_escalated` with a \
             `justification` to ask the user."
        }
        AskForApproval::OnFailure => {
            "Commands run in the sandbox; if one fails there, the user is asked whether to \
             retry it without the sandbox."
        }
        AskForApproval::Never => {
            "The user is never asked. Work within the sandbox; failures come back to you."
        }
        AskForApproval::Granular(_) => {
            "Commands run in the sandbox; some kinds of approval request are turned off and \
             are refused instead of asked, so do not rely on escalation."
        }
    };
    format!(
        "<permissions instructions>\nFilesystem sandboxing: sandbox mode is `{}`. {sandbox}\n\
         Approvals: policy is `{}`. {approval}\n</permissions instructions>",
        settings.sandbox_mode.as_str(),
        approval_name(settings.approval_policy)
    )
}

#[cfg(test)]
#[path = "agents_md_tests.rs"]
mod agents_md_tests;
#[cfg(test)]
#[path = "bounded_read_tests.rs"]
mod bounded_read_tests;
#[cfg(test)]
#[path = "budget_tests.rs"]
mod budget_tests;
#[cfg(test)]
#[path = "skills_tests.rs"]
mod skills_tests;
