//! Approval flows end to end against the mock model, through the runtime API (the user's
//! decisions are `Op::ExecApproval`) and through `troupe exec`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/runtime.rs"]
mod runtime_support;
mod support;

use serde_json::json;
use std::path::Path;
use std::time::Duration;
use support::{stderr, tool_outputs, Harness};
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::sandbox_linux::probe;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ops::{Op, ReviewDecision, UserInput};
use troupe_messages::policy::{AskForApproval, SandboxMode, SandboxSettings};
use troupe_messages::settings::SessionSettings;
use troupe_mock_model::{MockModel, MockResponse};

struct Setup {
    mock: MockModel,
    runtime: Runtime,
    thread: ThreadClient,
    _home: tempfile::TempDir,
    /// The workspace (cwd), not under /tmp so that "outside" is really outside.
    ws: tempfile::TempDir,
    /// A directory outside every writable root.
    outside: tempfile::TempDir,
}

fn var_tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("troupe-approval-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

async fn setup(
    script: Vec<MockResponse>,
    policy: AskForApproval,
    mode: SandboxMode,
    rules: Option<&str>,
) -> Setup {
    setup_with(script, policy, mode, rules, |_| {}).await
}

async fn setup_with(
    script: Vec<MockResponse>,
    policy: AskForApproval,
    mode: SandboxMode,
    rules: Option<&str>,
    tweak: impl FnOnce(&mut SessionSettings),
) -> Setup {
    probe::set_helper_exe(env!("CARGO_BIN_EXE_troupe").into());
    let mock = MockModel::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    if let Some(rules) = rules {
        std::fs::create_dir_all(home.path().join("rules")).unwrap();
        std::fs::write(home.path().join("rules/default.rules"), rules).unwrap();
    }
    let ws = var_tmp();
    let outside = var_tmp();
    let mut settings = runtime_support::settings(&mock, home.path(), ws.path());
    settings.approval_policy = policy;
    settings.sandbox_mode = mode;
    settings.default_shell_timeout_ms = 20_000;
    settings.sandbox = SandboxSettings {
        exclude_slash_tmp: true,
        exclude_tmpdir_env_var: true,
        ..SandboxSettings::default()
    };
    tweak(&mut settings);
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let thread = runtime.start_thread(settings).await.unwrap();
    Setup {
        mock,
        runtime,
        thread,
        _home: home,
        ws,
        outside,
    }
}

fn say(text: &str) -> Op {
    Op::UserInput {
        items: vec![UserInput::Text { text: text.into() }],
    }
}

/// Runs one turn, answering each approval request with the next decision. Returns the
/// events and the number of requests seen.
async fn turn(s: &mut Setup, decisions: &[ReviewDecision]) -> (Vec<EventMsg>, usize) {
    s.thread.submit(say("go")).unwrap();
    let mut events = Vec::new();
    let mut asked = 0;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), s.thread.next_event())
            .await
            .expect("event within 30 s")
            .expect("thread open");
        if let EventMsg::ExecApprovalRequest { call_id, .. } = &event.msg {
            let decision = *decisions
                .get(asked)
                .expect("no more approvals were expected");
            asked += 1;
            s.thread
                .submit(Op::ExecApproval {
                    call_id: call_id.clone(),
                    decision,
                })
                .unwrap();
        }
        let end = matches!(
            event.msg,
            EventMsg::TurnComplete { .. } | EventMsg::TurnAborted { .. }
        );
        events.push(event.msg);
        if end {
            return (events, asked);
        }
    }
}

fn last_outputs(s: &Setup) -> Vec<String> {
    let requests = s.mock.requests();
    tool_outputs(&requests.last().unwrap().body)
}

fn write_outside(dir: &Path, name: &str) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("echo x > {}/{name}", dir.display()),
    ]
}

fn shell(call_id: &str, argv: &[String]) -> MockResponse {
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    MockResponse::shell(call_id, &argv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_asks_and_runs_when_granted() {
    let mut s = setup(
        vec![
            MockResponse::shell("c1", &["touch", "made"]),
            MockResponse::text("done"),
        ],
        AskForApproval::UnlessTrusted,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    let (events, asked) = turn(&mut s, &[ReviewDecision::Approved]).await;
    assert_eq!(asked, 1);
    assert!(events
        .iter()
        .any(|e| matches!(e, EventMsg::TurnComplete { .. })));
    assert!(s.ws.path().join("made").exists());
    // A known-safe command is not asked about.
    let out = last_outputs(&s);
    assert!(out[0].contains("\"exit_code\":0"), "{out:?}");
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_for_session_is_not_asked_again() {
    let mut s = setup(
        vec![
            MockResponse::shell("c1", &["touch", "a"]),
            MockResponse::shell("c2", &["touch", "a"]),
            MockResponse::shell("c3", &["ls"]),
            MockResponse::text("done"),
            MockResponse::shell("c4", &["touch", "a"]),
            MockResponse::text("second turn"),
        ],
        AskForApproval::UnlessTrusted,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    let (_, asked) = turn(&mut s, &[ReviewDecision::ApprovedForSession]).await;
    assert_eq!(
        asked, 1,
        "the second identical command and `ls` must not be asked"
    );
    // The cache lives in the session: a later turn is not asked either.
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_command_does_not_run_and_the_model_is_told() {
    let mut s = setup(
        vec![
            MockResponse::shell("c1", &["touch", "nope"]),
            MockResponse::text("ok"),
        ],
        AskForApproval::UnlessTrusted,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    let (_, asked) = turn(&mut s, &[ReviewDecision::Denied]).await;
    assert_eq!(asked, 1);
    assert!(!s.ws.path().join("nope").exists());
    assert_eq!(
        last_outputs(&s),
        vec!["exec command rejected by user".to_string()]
    );
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_denial_is_retried_escalated_after_one_approval() {
    let outside = var_tmp();
    let argv = write_outside(outside.path(), "escalated");
    let mut s = setup(
        vec![shell("c1", &argv), MockResponse::text("ok")],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    let (events, asked) = turn(&mut s, &[ReviewDecision::Approved]).await;
    assert_eq!(asked, 1, "{events:?}");
    let ends = events
        .iter()
        .filter(|e| matches!(e, EventMsg::ExecCommandEnd { .. }))
        .count();
    assert_eq!(ends, 2, "a sandboxed attempt, then the escalated one");
    assert!(outside.path().join("escalated").exists());
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_read_survives_an_escalated_retry() {
    let outside = var_tmp();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "TOPSECRET\n").unwrap();
    let script = format!(
        "cat {} ; echo x > {}/written",
        secret.display(),
        outside.path().display()
    );
    let argv = vec!["sh".to_string(), "-c".to_string(), script];
    let deny = vec![secret.clone()];
    let mut s = setup_with(
        vec![shell("c1", &argv), MockResponse::text("ok")],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        move |settings| settings.sandbox.deny_read = deny,
    )
    .await;
    let (_, asked) = turn(&mut s, &[ReviewDecision::Approved]).await;
    assert_eq!(asked, 1);
    // The escalated retry could write outside, but still not read the secret.
    assert!(outside.path().join("written").exists());
    let out = last_outputs(&s);
    assert!(!out[0].contains("TOPSECRET"), "{out:?}");
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_denial_under_never_goes_back_to_the_model() {
    let mut s = setup(
        vec![],
        AskForApproval::Never,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    let argv = write_outside(s.outside.path(), "never");
    s.mock.push(shell("c1", &argv));
    s.mock.push(MockResponse::text("ok"));
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    assert!(!s.outside.path().join("never").exists());
    let out = last_outputs(&s);
    assert!(out[0].contains("Read-only file system"), "{out:?}");
    assert!(out[0].contains("not retried"), "{out:?}");
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_rule_refuses_without_asking() {
    let mut s = setup(
        vec![
            MockResponse::shell("c1", &["bash", "-lc", "ls && rm -rf build"]),
            MockResponse::text("ok"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::DangerFullAccess,
        Some("prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no deleting\", match=[\"rm -rf x\"])\n"),
    )
    .await;
    std::fs::create_dir(s.ws.path().join("build")).unwrap();
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    assert!(s.ws.path().join("build").exists());
    assert_eq!(
        last_outputs(&s),
        vec!["command refused: blocked by a command rule: no deleting".to_string()]
    );
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalation_request_is_asked_under_on_request_and_rejected_otherwise() {
    let outside = var_tmp();
    let argv = write_outside(outside.path(), "up");
    let args = json!({"command": argv, "sandbox_permissions": "require_escalated",
                      "justification": "write the shared cache"})
    .to_string();
    let mut s = setup(
        vec![
            MockResponse::tool_calls(vec![("c1", "shell", args.as_str())]),
            MockResponse::text("ok"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    let (events, asked) = turn(&mut s, &[ReviewDecision::Approved]).await;
    assert_eq!(asked, 1);
    assert!(events.iter().any(|e| matches!(e, EventMsg::ExecApprovalRequest { reason: Some(r), .. } if r == "write the shared cache")));
    let ends = events
        .iter()
        .filter(|e| matches!(e, EventMsg::ExecCommandEnd { .. }))
        .count();
    assert_eq!(ends, 1, "approved escalation runs unconfined at once");
    assert!(outside.path().join("up").exists());
    s.runtime.stop();

    let mut s = setup(
        vec![
            MockResponse::tool_calls(vec![("c1", "shell", args.as_str())]),
            MockResponse::text("ok"),
        ],
        AskForApproval::Never,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    let out = last_outputs(&s);
    assert!(
        out[0].contains("you should not ask for escalated permissions"),
        "{out:?}"
    );
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_and_abort_while_waiting_for_approval() {
    let mut s = setup(
        vec![
            MockResponse::shell("c1", &["touch", "x"]),
            MockResponse::shell("c2", &["touch", "y"]),
            MockResponse::text("after"),
        ],
        AskForApproval::UnlessTrusted,
        SandboxMode::WorkspaceWrite,
        None,
    )
    .await;
    s.thread.submit(say("go")).unwrap();
    loop {
        let event = s.thread.next_event().await.unwrap();
        if matches!(event.msg, EventMsg::ExecApprovalRequest { .. }) {
            break;
        }
    }
    s.thread.submit(Op::Interrupt).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), s.thread.next_event())
            .await
            .unwrap()
            .unwrap();
        if let EventMsg::TurnAborted { reason, .. } = event.msg {
            assert_eq!(reason, AbortReason::Interrupted);
            break;
        }
    }
    assert!(!s.ws.path().join("x").exists());
    // The session goes on; "abort" as a decision ends that turn too.
    let (events, asked) = turn(&mut s, &[ReviewDecision::Abort]).await;
    assert_eq!(asked, 1);
    assert!(events.iter().any(|e| matches!(
        e,
        EventMsg::TurnAborted {
            reason: AbortReason::Interrupted,
            ..
        }
    )));
    assert!(!s.ws.path().join("y").exists());
    s.runtime.stop();
}

#[test]
fn exec_denies_approval_requests_with_a_clear_message() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "asked"]),
        MockResponse::text("gave up"),
    ]);
    let out = h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "-a",
            "untrusted",
            "go",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs approval"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--ask-for-approval never"),
        "{}",
        stderr(&out)
    );
    assert!(!h.workdir.path().join("asked").exists());
    let outputs = tool_outputs(&h.mock.requests()[1].body);
    assert_eq!(outputs, vec!["exec command rejected by user".to_string()]);

    // --full-auto: sandboxed, no asking, the command runs.
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "ran"]),
        MockResponse::text("done"),
    ]);
    let out = h
        .command()
        .args(["exec", "--skip-git-repo-check", "--full-auto", "go"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(h.workdir.path().join("ran").exists(), "{}", stderr(&out));
}

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

impl troupe_actors::tool_orchestrator::registry::ToolHandler for FakePatch {
    fn spec(&self) -> troupe_messages::tools::ToolSpec {
        troupe_messages::tools::ToolSpec::Function {
            name: "fake_patch".into(),
            description: "pretends to patch files".into(),
            strict: false,
            parameters: json!({"type": "object"}),
        }
    }
    fn concurrency(&self) -> troupe_actors::tool_orchestrator::registry::Concurrency {
        troupe_actors::tool_orchestrator::registry::Concurrency::Exclusive
    }
    fn handle(
        &self,
        ctx: troupe_actors::tool_orchestrator::registry::ToolContext,
    ) -> futures::future::BoxFuture<'static, troupe_actors::tool_orchestrator::registry::ToolOutcome>
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
                Ok(()) => troupe_actors::tool_orchestrator::registry::ToolOutcome {
                    content: "applied".into(),
                    success: true,
                },
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
    let mut settings = runtime_support::settings(&mock, home.path(), ws.path());
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
