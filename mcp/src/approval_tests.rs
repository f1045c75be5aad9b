use super::*;

fn hints(
    read_only: Option<bool>,
    destructive: Option<bool>,
    open_world: Option<bool>,
) -> ToolAnnotations {
    ToolAnnotations {
        read_only_hint: read_only,
        destructive_hint: destructive,
        open_world_hint: open_world,
        ..Default::default()
    }
}

const ASK: AskForApproval = AskForApproval::OnRequest;
const WS: SandboxMode = SandboxMode::WorkspaceWrite;

#[test]
fn modes_decide_as_codex_does() {
    let read_only = hints(Some(true), None, None);
    let closed_world = hints(None, Some(false), Some(false));
    let destructive = hints(Some(true), Some(true), None);
    use McpToolApproval::*;
    assert!(!needs_approval(Approve, Some(&destructive), ASK, WS));
    assert!(needs_approval(Prompt, Some(&read_only), ASK, WS));
    assert!(!needs_approval(Writes, Some(&read_only), ASK, WS));
    assert!(needs_approval(Writes, None, ASK, WS));
    assert!(!needs_approval(Auto, Some(&read_only), ASK, WS));
    assert!(!needs_approval(Auto, Some(&closed_world), ASK, WS));
    assert!(
        needs_approval(Auto, Some(&destructive), ASK, WS),
        "destructive wins over read-only"
    );
    assert!(needs_approval(Auto, None, ASK, WS), "no hints: ask");
    assert!(!needs_approval(
        Auto,
        None,
        AskForApproval::Never,
        SandboxMode::DangerFullAccess
    ));
    assert!(needs_approval(
        Prompt,
        None,
        AskForApproval::Never,
        SandboxMode::DangerFullAccess
    ));
}
