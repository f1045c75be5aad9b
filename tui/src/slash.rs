//! Slash commands: names, help text, and the popup's matching.

use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::threads::ThreadSummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashCommand {
    New,
    Resume,
    Fork,
    Compact,
    Model,
    Approvals,
    Status,
    Agents,
    Diff,
    Review,
    Init,
    Help,
    Quit,
    Permissions,
    Plan,
    Mention,
    Reasoning,
    Goal,
    Rewind,
}

impl SlashCommand {
    pub const ALL: [SlashCommand; 19] = [
        SlashCommand::New,
        SlashCommand::Resume,
        SlashCommand::Fork,
        SlashCommand::Compact,
        SlashCommand::Model,
        SlashCommand::Approvals,
        SlashCommand::Permissions,
        SlashCommand::Plan,
        SlashCommand::Status,
        SlashCommand::Agents,
        SlashCommand::Diff,
        SlashCommand::Rewind,
        SlashCommand::Review,
        SlashCommand::Init,
        SlashCommand::Mention,
        SlashCommand::Reasoning,
        SlashCommand::Help,
        SlashCommand::Quit,
        SlashCommand::Goal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SlashCommand::New => "new",
            SlashCommand::Resume => "resume",
            SlashCommand::Fork => "fork",
            SlashCommand::Compact => "compact",
            SlashCommand::Model => "model",
            SlashCommand::Approvals => "approvals",
            SlashCommand::Status => "status",
            SlashCommand::Agents => "agents",
            SlashCommand::Diff => "diff",
            SlashCommand::Review => "review",
            SlashCommand::Init => "init",
            SlashCommand::Help => "help",
            SlashCommand::Quit => "quit",
            SlashCommand::Permissions => "permissions",
            SlashCommand::Plan => "plan",
            SlashCommand::Mention => "mention",
            SlashCommand::Reasoning => "reasoning",
            SlashCommand::Goal => "goal",
            SlashCommand::Rewind => "rewind",
        }
    }

    pub fn help(self) -> &'static str {
        match self {
            SlashCommand::New => "start a new thread",
            SlashCommand::Resume => "resume a recorded thread (picker)",
            SlashCommand::Fork => "fork this thread into a new one",
            SlashCommand::Compact => "summarise the history to free context",
            SlashCommand::Model => "show or set the model: /model NAME",
            SlashCommand::Approvals => "show or set when to ask: /approvals on-request",
            SlashCommand::Status => "model, policies, context and tokens",
            SlashCommand::Agents => "threads panel (Ctrl+T)",
            SlashCommand::Diff => "the turn's diff, or the work tree's",
            SlashCommand::Review => "review the changes: /review [base BRANCH|commit SHA|TEXT]",
            SlashCommand::Init => "write an AGENTS.md skeleton",
            SlashCommand::Help => "list commands and keys",
            SlashCommand::Quit => "exit troupe",
            SlashCommand::Permissions => {
                "show or set sandbox and approvals: /permissions read-only|auto|full-access"
            }
            SlashCommand::Plan => "toggle plan mode (read-only, proposes a plan)",
            SlashCommand::Mention => "mention a file: starts an @ path completion",
            SlashCommand::Reasoning => "show reasoning expanded or collapsed (Ctrl+O: transcript)",
            SlashCommand::Goal => "give the thread a goal it pursues across turns: /goal OBJECTIVE",
            SlashCommand::Rewind => "take the files and/or the conversation back to before a turn",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "exit" => Some(SlashCommand::Quit),
            _ => Self::ALL.into_iter().find(|c| c.name() == name),
        }
    }
}

/// The commands the popup offers for the composer's text: while it is `/` and a prefix of
/// a command name (no space yet).
pub fn matching(text: &str) -> Vec<SlashCommand> {
    let Some(prefix) = text.strip_prefix('/') else {
        return Vec::new();
    };
    if prefix.contains(char::is_whitespace) {
        return Vec::new();
    }
    SlashCommand::ALL
        .into_iter()
        .filter(|c| c.name().starts_with(prefix))
        .collect()
}

pub fn parse_approval(arg: &str) -> Option<AskForApproval> {
    match arg {
        "untrusted" => Some(AskForApproval::UnlessTrusted),
        "on-request" => Some(AskForApproval::OnRequest),
        "on-failure" => Some(AskForApproval::OnFailure),
        "never" => Some(AskForApproval::Never),
        _ => None,
    }
}

/// Threads whose id, title or directory contains `filter` (case-insensitive).
pub fn filter_threads<'a>(items: &'a [ThreadSummary], filter: &str) -> Vec<&'a ThreadSummary> {
    let filter = filter.to_lowercase();
    items
        .iter()
        .filter(|t| {
            filter.is_empty()
                || t.id.to_string().contains(&filter)
                || t.title.to_lowercase().contains(&filter)
                || t.cwd.display().to_string().to_lowercase().contains(&filter)
        })
        .collect()
}

/// A `/permissions` preset (Codex's three) or a sandbox mode with an optional approval
/// policy: `read-only`, `auto`, `full-access`, or `SANDBOX [APPROVAL]`.
pub fn parse_permissions(arg: &str) -> Option<(SandboxMode, Option<AskForApproval>)> {
    let mut words = arg.split_whitespace();
    let first = words.next()?;
    let preset = match first {
        "read-only" | "readonly" => (SandboxMode::ReadOnly, Some(AskForApproval::OnRequest)),
        "auto" => (SandboxMode::WorkspaceWrite, Some(AskForApproval::OnRequest)),
        "full-access" => (SandboxMode::DangerFullAccess, Some(AskForApproval::Never)),
        "workspace-write" => (SandboxMode::WorkspaceWrite, None),
        "danger-full-access" => (SandboxMode::DangerFullAccess, None),
        _ => return None,
    };
    match (words.next(), words.next()) {
        (None, _) => Some(preset),
        (Some(policy), None) if first != "auto" && first != "full-access" => {
            parse_approval(policy).map(|p| (preset.0, Some(p)))
        }
        _ => None,
    }
}
