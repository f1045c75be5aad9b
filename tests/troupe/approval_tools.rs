//! Approval of the other tools end to end: rules and patches (per-file session keys),
//! `exec_command` and `apply_patch` under the gate and the sandbox, and `troupe exec`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::approval_support::*;
use serde_json::json;
use std::time::Duration;
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, ReviewDecision};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_mock_model::{MockModel, MockResponse};
use troupe_test_support::{stderr, tool_outputs, Harness};

#[test]
fn a_broken_rules_file_stops_exec_with_file_and_line() {
    let h = Harness::new(vec![MockResponse::text("never reached")]);
    let rules = h.home.path().join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("team.rules"),
        "prefix_rule(pattern=[\"git\", \"push\"], match=[\"git pull\"])\n",
    )
    .unwrap();
    let out = h.exec(&["go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("team.rules:1"), "{err}");
    assert!(err.contains("does not match"), "{err}");
    assert!(
        h.mock.requests().is_empty(),
        "nothing may run without its rules"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_project_rules_apply() {
    let project_rules = var_tmp();
    std::fs::write(
        project_rules.path().join("p.rules"),
        "prefix_rule(pattern=[\"touch\"], decision=\"forbidden\", justification=\"project says no\")\n",
    )
    .unwrap();
    let dir = project_rules.path().to_path_buf();
    let mut s = setup_with(
        vec![
            MockResponse::shell("c1", &["touch", "f"]),
            MockResponse::text("ok"),
        ],
        AskForApproval::Never,
        SandboxMode::DangerFullAccess,
        None,
        move |settings| settings.sandbox.project_rules_dirs = vec![dir],
    )
    .await;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    assert!(!s.ws.path().join("f").exists());
    assert_eq!(
        last_outputs(&s),
        vec!["command refused: blocked by a command rule: project says no".to_string()]
    );
    s.runtime.stop();
}

/// A stand-in for a patch tool: asks the patch gate about the files in its arguments.
struct FakePatch;

impl troupe_actors::tool_orchestrator::contract::ToolHandler for FakePatch {
    fn spec(&self) -> troupe_messages::tools::ToolSpec {
        troupe_messages::tools::ToolSpec::Function {
            name: "fake_patch".into(),
            description: "pretends to patch files".into(),
            strict: false,
            parameters: json!({"type": "object"}),
        }
    }
    fn concurrency(&self) -> troupe_actors::tool_orchestrator::contract::Concurrency {
        troupe_actors::tool_orchestrator::contract::Concurrency::Exclusive
    }
    fn handle(
        &self,
        ctx: troupe_actors::tool_orchestrator::contract::ToolContext,
    ) -> futures::future::BoxFuture<'static, troupe_actors::tool_orchestrator::contract::ToolOutcome>
    {
        Box::pin(async move {
            let troupe_messages::tools::ToolPayload::Function { arguments } = &ctx.call.payload
            else {
                unreachable!()
            };
            let args: serde_json::Value = serde_json::from_str(arguments).unwrap();
            let files: Vec<std::path::PathBuf> = args["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| ctx.settings.cwd.join(f.as_str().unwrap()))
                .collect();
            match troupe_actors::tool_orchestrator::approval_gate::approve_patch(&ctx, &files, None)
                .await
            {
                Ok(()) => troupe_actors::tool_orchestrator::contract::ToolOutcome::ok("applied"),
                Err(outcome) => outcome,
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_approval_for_session_is_per_file() {
    let patch = |id: &'static str, files: &[&str]| {
        let args = json!({ "files": files }).to_string();
        MockResponse::tool_calls(vec![(id, "fake_patch", args.as_str())])
    };
    let mock = MockModel::start(vec![
        patch("p1", &["a.ts", "b.ts"]),
        patch("p2", &["a.ts"]),
        patch("p3", &["b.ts", "a.ts"]),
        patch("p4", &["a.ts", "c.ts"]),
        MockResponse::text("done"),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = var_tmp();
    let mut settings = troupe_test_support::runtime::settings(&mock, home.path(), ws.path());
    settings.approval_policy = AskForApproval::UnlessTrusted;
    settings.sandbox_mode = SandboxMode::WorkspaceWrite;
    let mut registry = ToolRegistry::with_builtin_tools();
    registry.register(std::sync::Arc::new(FakePatch));
    let runtime = Runtime::start(registry).await.unwrap();
    let mut thread = runtime.start_thread(settings).await.unwrap();
    thread.submit(say("go")).unwrap();
    let mut asked = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), thread.next_event())
            .await
            .unwrap()
            .unwrap();
        match event.msg {
            EventMsg::ApplyPatchApprovalRequest { call_id, files, .. } => {
                asked.push((call_id.clone(), files.len()));
                thread
                    .submit(Op::ExecApproval {
                        call_id,
                        decision: ReviewDecision::ApprovedForSession,
                    })
                    .unwrap();
            }
            EventMsg::TurnComplete { .. } => break,
            EventMsg::TurnAborted { .. } => panic!("turn aborted"),
            _ => {}
        }
    }
    // p2 and p3 only touch approved files; p4 adds c.ts and is asked again.
    assert_eq!(asked, vec![("p1".to_string(), 2), ("p4".to_string(), 2)]);
    let outputs = tool_outputs(&mock.requests().last().unwrap().body);
    assert_eq!(outputs, vec!["applied"; 4]);
    runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_command_and_apply_patch_go_through_the_gate_and_sandbox() {
    use troupe_messages::settings::{ApplyPatchToolType, ShellToolType};
    let outside = var_tmp();
    let out = outside.path().display().to_string();
    let cmd = format!("echo x > {out}/pty; echo in > inside.txt; cat inside.txt");
    let exec = json!({"cmd": cmd, "login": false, "yield_time_ms": 10000}).to_string();
    let patch = json!({
        "input": format!("*** Begin Patch\n*** Add File: {out}/patched.txt\n+hi\n*** End Patch\n")
    })
    .to_string();
    let mut s = setup_with(
        vec![
            MockResponse::tool_calls(vec![("e1", "exec_command", exec.as_str())]),
            MockResponse::tool_calls(vec![("p1", "apply_patch", patch.as_str())]),
            MockResponse::text("ok"),
        ],
        AskForApproval::Never,
        SandboxMode::WorkspaceWrite,
        None,
        |settings| {
            settings.tools.shell = ShellToolType::ExecCommand;
            settings.tools.apply_patch = ApplyPatchToolType::Function;
        },
    )
    .await;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    let requests = s.mock.requests();
    let exec_out = tool_outputs(&requests[1].body).join("\n");
    assert!(exec_out.contains("Read-only file system"), "{exec_out}");
    assert!(exec_out.contains("in"), "{exec_out}");
    assert!(!outside.path().join("pty").exists());
    assert!(s.ws.path().join("inside.txt").exists());
    let patch_out = tool_outputs(&requests[2].body).join("\n");
    assert!(
        patch_out.contains("patch refused: the patch writes outside the writable roots"),
        "{patch_out}"
    );
    assert!(!outside.path().join("patched.txt").exists());
    s.runtime.stop();
}
