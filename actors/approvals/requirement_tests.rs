use super::*;
use pretty_assertions::assert_eq;
use troupe_messages::policy::GranularApprovalConfig;
use ApprovalRequirement::{Forbidden, NeedsApproval, Skip};
use FileSystemSandboxKind::{External, Restricted, Unrestricted};

fn granular(sandbox_approval: bool) -> AskForApproval {
    AskForApproval::Granular(GranularApprovalConfig {
        sandbox_approval,
        ..GranularApprovalConfig::default()
    })
}

fn skip() -> ApprovalRequirement {
    Skip {
        bypass_sandbox: false,
    }
}

fn ask() -> ApprovalRequirement {
    NeedsApproval { reason: None }
}

fn forbidden() -> ApprovalRequirement {
    Forbidden {
        reason: SANDBOX_PROMPT_DISALLOWED.into(),
    }
}

/// Every cell of the policy × sandbox table of `default_requirement`, plus the external kind (≠ Restricted) and on-failure.
#[test]
fn truth_table_every_cell() {
    let cases = [
        (AskForApproval::Never, Restricted, skip()),
        (AskForApproval::Never, Unrestricted, skip()),
        (AskForApproval::Never, External, skip()),
        (AskForApproval::UnlessTrusted, Restricted, ask()),
        (AskForApproval::UnlessTrusted, Unrestricted, ask()),
        (AskForApproval::UnlessTrusted, External, ask()),
        (AskForApproval::OnRequest, Restricted, ask()),
        (AskForApproval::OnRequest, Unrestricted, skip()),
        (AskForApproval::OnRequest, External, skip()),
        (granular(true), Restricted, ask()),
        (granular(true), Unrestricted, skip()),
        (granular(true), External, skip()),
        (granular(false), Restricted, forbidden()),
        // The cell that is easy to get wrong: no approval needed, so "no prompts" is moot.
        (granular(false), Unrestricted, skip()),
        (granular(false), External, skip()),
        (AskForApproval::OnFailure, Restricted, skip()),
        (AskForApproval::OnFailure, Unrestricted, skip()),
    ];
    for (policy, fs, expected) in cases {
        assert_eq!(
            default_requirement(policy, fs),
            expected,
            "{policy:?} × {fs:?}"
        );
    }
}

fn facts(policy: AskForApproval) -> CommandFacts<'static> {
    CommandFacts {
        policy,
        fs_kind: Restricted,
        rule: None,
        escalation: None,
        known_safe: false,
    }
}

#[test]
fn rules_come_first() {
    let mut f = facts(AskForApproval::OnRequest);
    f.rule = Some((RuleDecision::Forbidden, Some("no".into())));
    f.known_safe = true;
    assert_eq!(
        command_requirement(&f),
        Forbidden {
            reason: "blocked by a command rule: no".into()
        }
    );
    f.rule = Some((RuleDecision::Allow, None));
    assert_eq!(
        command_requirement(&f),
        Skip {
            bypass_sandbox: true
        }
    );
    f.rule = Some((RuleDecision::Prompt, Some("pushes".into())));
    assert_eq!(
        command_requirement(&f),
        NeedsApproval {
            reason: Some("pushes".into())
        }
    );
    // A prompt rule under `never`, or granular without rule prompts, is refused, not allowed.
    f.policy = AskForApproval::Never;
    assert!(matches!(command_requirement(&f), Forbidden { .. }));
    f.policy = AskForApproval::Granular(GranularApprovalConfig {
        rules: false,
        ..GranularApprovalConfig::default()
    });
    assert!(
        matches!(command_requirement(&f), Forbidden { reason } if reason.contains("rule prompts"))
    );
}

#[test]
fn shell_defaults_per_policy() {
    // untrusted: safe commands run, others are asked about.
    let mut f = facts(AskForApproval::UnlessTrusted);
    assert_eq!(command_requirement(&f), ask());
    f.known_safe = true;
    assert_eq!(command_requirement(&f), skip());
    // Others run sandboxed first.
    for policy in [
        AskForApproval::OnRequest,
        AskForApproval::Never,
        AskForApproval::OnFailure,
        granular(false),
    ] {
        assert_eq!(command_requirement(&facts(policy)), skip(), "{policy:?}");
    }
    // An escalation request (on-request) is asked about with the model's justification.
    let mut f = facts(AskForApproval::OnRequest);
    f.escalation = Some(Some("needs /var"));
    assert_eq!(
        command_requirement(&f),
        NeedsApproval {
            reason: Some("needs /var".into())
        }
    );
}

#[test]
fn retry_after_sandbox_denial() {
    let asks = |r: &ApprovalRequirement| matches!(r, NeedsApproval { .. });
    assert!(asks(&retry_requirement(
        AskForApproval::OnRequest,
        Restricted,
        false
    )));
    assert!(asks(&retry_requirement(
        AskForApproval::UnlessTrusted,
        Restricted,
        false
    )));
    assert!(asks(&retry_requirement(granular(true), Restricted, false)));
    // Already approved: retried unconfined without asking again.
    assert_eq!(
        retry_requirement(AskForApproval::OnRequest, Restricted, true),
        Skip {
            bypass_sandbox: true
        }
    );
    // Never and granular-without-sandbox-prompts: reported to the model, never retried.
    assert!(matches!(
        retry_requirement(AskForApproval::Never, Restricted, true),
        Forbidden { .. }
    ));
    assert_eq!(
        retry_requirement(granular(false), Restricted, false),
        forbidden()
    );
}

#[test]
fn escalation_only_under_on_request() {
    assert_eq!(escalation_rejection(AskForApproval::OnRequest), None);
    let text = escalation_rejection(AskForApproval::Never).unwrap();
    assert!(text.contains("approval policy is never"), "{text}");
    assert!(escalation_rejection(AskForApproval::UnlessTrusted).is_some());
    assert!(escalation_rejection(granular(true)).is_some());
}
