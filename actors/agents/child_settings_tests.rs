use super::child_settings::{child_settings, ChildRequest};
use troupe_messages::agents::AgentRole;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::SessionSettings;

fn parent(mode: SandboxMode) -> SessionSettings {
    let mut settings = crate::thread_store::test_support::settings();
    settings.sandbox_mode = mode;
    settings
}

fn request<'a>(role: Option<&'a AgentRole>) -> ChildRequest<'a> {
    ChildRequest {
        task_path: "/root/x",
        role_name: "r",
        role,
        model: None,
        reasoning_effort: None,
    }
}

#[test]
fn a_child_inherits_every_permission_and_goes_one_level_deeper() {
    let mut p = parent(SandboxMode::WorkspaceWrite);
    p.approval_policy = AskForApproval::UnlessTrusted;
    p.sandbox.deny_read = vec!["/secret".into()];
    p.sandbox.writable_roots = vec!["/w/extra".into()];
    let child = child_settings(&p, &request(None)).unwrap();
    assert_eq!(child.sandbox_mode, SandboxMode::WorkspaceWrite);
    assert_eq!(child.approval_policy, AskForApproval::UnlessTrusted);
    assert_eq!(child.sandbox, p.sandbox);
    assert_eq!(child.agents.depth, p.agents.depth + 1);
    assert_eq!(child.agents.task_path, "/root/x");
}

#[test]
fn a_role_may_narrow_the_sandbox_but_never_widen_it() {
    let narrow = AgentRole {
        sandbox_mode: Some(SandboxMode::ReadOnly),
        ..AgentRole::default()
    };
    let child = child_settings(
        &parent(SandboxMode::WorkspaceWrite),
        &request(Some(&narrow)),
    );
    assert_eq!(child.unwrap().sandbox_mode, SandboxMode::ReadOnly);
    let wide = AgentRole {
        sandbox_mode: Some(SandboxMode::DangerFullAccess),
        ..AgentRole::default()
    };
    let err = child_settings(&parent(SandboxMode::ReadOnly), &request(Some(&wide))).unwrap_err();
    assert!(err.contains("never widen"), "{err}");
}

#[test]
fn bad_reasoning_effort_is_refused() {
    let mut req = request(None);
    req.reasoning_effort = Some("turbo");
    assert!(child_settings(&parent(SandboxMode::ReadOnly), &req).is_err());
}
