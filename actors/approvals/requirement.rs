//! Whether a call may run, must be asked about, or is refused: Codex's two-stage rule (first
//! the approval policy, then the shape of the sandbox the call would run in, decide between
//! skip, ask and forbid; see `default_requirement`), and the shell-specific layering
//! (rules → escalation request → known-safe → that table).

use troupe_messages::policy::{AskForApproval, FileSystemSandboxKind};
use troupe_rules::RuleDecision;

/// What must happen before a call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalRequirement {
    /// Run without asking; with `bypass_sandbox` the first attempt runs unconfined.
    Skip { bypass_sandbox: bool },
    /// Ask the user first.
    NeedsApproval { reason: Option<String> },
    /// Refuse; the reason goes back to the model.
    Forbidden { reason: String },
}

/// The reason given when granular config turns a would-be prompt into a refusal.
pub const SANDBOX_PROMPT_DISALLOWED: &str = "approval policy disallowed sandbox approval prompt";

/// Chapter 12, exactly. Stage 1 looks only at policy × filesystem kind; stage 2 lets
/// `granular` upgrade a needed approval to `Forbidden`. A call that needs no approval is never
/// refused by the "no prompts" switch (granular + unrestricted = Skip).
pub fn default_requirement(
    policy: AskForApproval,
    fs_kind: FileSystemSandboxKind,
) -> ApprovalRequirement {
    let needs_approval = match policy {
        AskForApproval::Never | AskForApproval::OnFailure => false,
        AskForApproval::OnRequest | AskForApproval::Granular(_) => {
            fs_kind == FileSystemSandboxKind::Restricted
        }
        AskForApproval::UnlessTrusted => true,
    };
    match policy {
        AskForApproval::Granular(cfg) if needs_approval && !cfg.sandbox_approval => {
            ApprovalRequirement::Forbidden {
                reason: SANDBOX_PROMPT_DISALLOWED.into(),
            }
        }
        _ if needs_approval => ApprovalRequirement::NeedsApproval { reason: None },
        _ => ApprovalRequirement::Skip {
            bypass_sandbox: false,
        },
    }
}

/// Everything the shell path knows about one command when deciding.
#[derive(Debug, Clone)]
pub struct CommandFacts<'a> {
    pub policy: AskForApproval,
    pub fs_kind: FileSystemSandboxKind,
    /// The rules' verdict (`Rules::evaluate_command`): forbidden/prompt if any command found
    /// anywhere matches; allow only when every part of a plain command is covered.
    pub rule: Option<(RuleDecision, Option<String>)>,
    /// The model asked to run outside the sandbox, with this justification.
    pub escalation: Option<Option<&'a str>>,
    /// Every part of the command is on the known-safe read-only list.
    pub known_safe: bool,
}

/// The requirement for a shell command (Codex's exec-policy layering over the table above).
pub fn command_requirement(facts: &CommandFacts<'_>) -> ApprovalRequirement {
    if let Some((decision, justification)) = &facts.rule {
        return match decision {
            RuleDecision::Forbidden => ApprovalRequirement::Forbidden {
                reason: match justification {
                    Some(why) => format!("blocked by a command rule: {why}"),
                    None => "blocked by a command rule".into(),
                },
            },
            RuleDecision::Prompt => rule_prompt(facts.policy, justification.clone()),
            // An allow rule is the user saying "this command is fine": run it as is.
            RuleDecision::Allow => ApprovalRequirement::Skip {
                bypass_sandbox: true,
            },
        };
    }
    if let Some(justification) = facts.escalation {
        // Only reachable under on-request: other policies reject the request earlier.
        return ApprovalRequirement::NeedsApproval {
            reason: justification.map(str::to_string),
        };
    }
    if facts.known_safe {
        return ApprovalRequirement::Skip {
            bypass_sandbox: false,
        };
    }
    match facts.policy {
        AskForApproval::UnlessTrusted => default_requirement(facts.policy, facts.fs_kind),
        // Sandboxed first; a sandbox denial may lead to an escalation prompt (see
        // `retry_requirement`), which is where the table applies to these policies.
        AskForApproval::OnRequest
        | AskForApproval::OnFailure
        | AskForApproval::Never
        | AskForApproval::Granular(_) => ApprovalRequirement::Skip {
            bypass_sandbox: false,
        },
    }
}

fn rule_prompt(policy: AskForApproval, justification: Option<String>) -> ApprovalRequirement {
    let reason = justification.unwrap_or_else(|| "a command rule asks for approval".into());
    match policy {
        AskForApproval::Never => ApprovalRequirement::Forbidden {
            reason: format!("{reason}; the approval policy is `never`, so it was refused"),
        },
        AskForApproval::Granular(cfg) if !cfg.rules => ApprovalRequirement::Forbidden {
            reason: format!("{reason}; approval policy disallowed rule prompts"),
        },
        _ => ApprovalRequirement::NeedsApproval {
            reason: Some(reason),
        },
    }
}

/// After a sandboxed attempt was denied by the sandbox: may it be retried unconfined, and
/// must the user be asked? `already_approved` is true when the first approval (or the
/// session cache) covered this command, in which case nobody is asked again.
pub fn retry_requirement(
    policy: AskForApproval,
    fs_kind: FileSystemSandboxKind,
    already_approved: bool,
) -> ApprovalRequirement {
    let no_retry = |why: &str| ApprovalRequirement::Forbidden { reason: why.into() };
    match policy {
        AskForApproval::Never => {
            no_retry("the approval policy is `never`: not retried outside the sandbox")
        }
        AskForApproval::Granular(cfg) if !cfg.sandbox_approval => {
            no_retry(SANDBOX_PROMPT_DISALLOWED)
        }
        _ if already_approved => ApprovalRequirement::Skip {
            bypass_sandbox: true,
        },
        AskForApproval::UnlessTrusted
        | AskForApproval::OnRequest
        | AskForApproval::OnFailure
        | AskForApproval::Granular(_) => match default_requirement(policy, fs_kind) {
            // Only a restricted sandbox can deny; treat any kind as needing the user.
            ApprovalRequirement::Skip { .. } | ApprovalRequirement::NeedsApproval { .. } => {
                ApprovalRequirement::NeedsApproval {
                    reason: Some("command failed in the sandbox; retry without it?".into()),
                }
            }
            forbidden @ ApprovalRequirement::Forbidden { .. } => forbidden,
        },
    }
}

/// Chapter 13 case C: an escalation request outside `on-request` is rejected, and the text
/// teaches the model not to ask again.
pub fn escalation_rejection(policy: AskForApproval) -> Option<String> {
    match policy {
        AskForApproval::OnRequest => None,
        AskForApproval::UnlessTrusted
        | AskForApproval::OnFailure
        | AskForApproval::Never
        | AskForApproval::Granular(_) => Some(format!(
            "approval policy is {}; reject command — you should not ask for escalated \
             permissions if the approval policy is {}",
            policy.as_str(),
            policy.as_str()
        )),
    }
}

#[cfg(test)]
#[path = "requirement_tests.rs"]
mod tests;
