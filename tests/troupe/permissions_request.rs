//! `request_permissions` end to end: the spec Codex 0.169 sends, the approval (turn or
//! session scope), the widened sandbox of later commands (real sandbox helper, real files),
//! the grant recorded in the rollout and held after a resume, the requirements ceiling, and
//! the app-server's approval through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::{start, Transport};
use crate::approval_support::*;
use serde_json::{json, Value};
use std::path::Path;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, ReviewDecision};
use troupe_messages::permissions::GrantScope;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, tool_outputs, Harness};

/// A `request_permissions` call asking to write `dir`.
fn ask_write(call_id: &str, dir: &Path) -> MockResponse {
    let args = json!({
        "permissions": {"file_system": {"write": [dir]}},
        "reason": "write the build output"
    })
    .to_string();
    MockResponse::tool_calls(vec![(call_id, "request_permissions", args)])
}

fn enable(settings: &mut troupe_messages::settings::SessionSettings) {
    settings.tools.request_permissions = true;
}

fn rollout_path(events: &[EventMsg]) -> Option<std::path::PathBuf> {
    events.iter().find_map(|e| match e {
        EventMsg::SessionConfigured { rollout_path, .. } => Some(rollout_path.clone()),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_grant_widens_later_commands_and_survives_resume() {
    let outside = var_tmp();
    let mut s = setup_with(
        vec![
            ask_write("p1", outside.path()),
            shell("c1", &write_outside(outside.path(), "first")),
            MockResponse::text("granted"),
            shell("c2", &write_outside(outside.path(), "second")),
            MockResponse::text("next turn"),
            shell("c3", &write_outside(outside.path(), "after-resume")),
            MockResponse::text("resumed"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        enable,
    )
    .await;
    let configured = s.thread.next_event().await.unwrap().msg;
    let rollout = rollout_path(&[configured]).expect("SessionConfigured first");
    let (events, asked) = turn(&mut s, &[ReviewDecision::ApprovedForSession]).await;
    assert_eq!(asked, 1);
    let command = events.iter().find_map(|e| match e {
        EventMsg::ExecApprovalRequest {
            command, reason, ..
        } => Some((command.clone(), reason.clone())),
        _ => None,
    });
    let root = std::fs::canonicalize(outside.path()).unwrap();
    assert_eq!(
        command,
        Some((
            vec![
                "request_permissions".to_string(),
                "--write".into(),
                root.display().to_string()
            ],
            Some("write the build output".to_string())
        ))
    );
    assert!(events.iter().any(|e| matches!(
        e,
        EventMsg::PermissionsGranted {
            scope: GrantScope::Session,
            ..
        }
    )));
    let requests = s.mock.requests();
    let answer = &tool_outputs(&requests[1].body)[0];
    assert_eq!(
        serde_json::from_str::<Value>(answer).unwrap(),
        json!({"permissions": {"network": null, "file_system": {"write": [root]}},
               "scope": "session"})
    );
    assert!(outside.path().join("first").exists(), "granted write ran");
    // The next turn writes there without being asked.
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    assert!(outside.path().join("second").exists());

    // Shut down, resume from the rollout in a fresh runtime: the grant still holds.
    s.thread.submit(Op::Shutdown).unwrap();
    while s.thread.next_event().await.is_some() {}
    s.runtime.stop();
    let text = std::fs::read_to_string(&rollout).unwrap();
    assert!(text.contains("\"permissions_granted\""), "recorded");
    let runtime = troupe_actors::runtime::Runtime::start(
        troupe_actors::tool_orchestrator::registry::ToolRegistry::with_builtin_tools(),
    )
    .await
    .unwrap();
    let mut settings = troupe_test_support::runtime::settings(&s.mock, s._home.path(), s.ws.path());
    settings.approval_policy = AskForApproval::OnRequest;
    settings.sandbox_mode = SandboxMode::WorkspaceWrite;
    settings.sandbox.exclude_slash_tmp = true;
    settings.sandbox.exclude_tmpdir_env_var = true;
    enable(&mut settings);
    s.thread = runtime.resume_thread(settings, rollout).await.unwrap();
    s.runtime = runtime;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0, "the session grant came back with the rollout");
    assert!(outside.path().join("after-resume").exists());
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_grant_ends_with_its_turn() {
    let outside = var_tmp();
    let mut s = setup_with(
        vec![
            ask_write("p1", outside.path()),
            shell("c1", &write_outside(outside.path(), "in-turn")),
            MockResponse::text("granted"),
            shell("c2", &write_outside(outside.path(), "next-turn")),
            MockResponse::text("refused"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        enable,
    )
    .await;
    let (events, asked) = turn(&mut s, &[ReviewDecision::Approved]).await;
    assert_eq!(asked, 1);
    assert!(events.iter().any(|e| matches!(
        e,
        EventMsg::PermissionsGranted {
            scope: GrantScope::Turn,
            ..
        }
    )));
    assert!(outside.path().join("in-turn").exists());
    // Next turn: the sandbox blocks the write again; the escalation question is denied.
    let (_, asked) = turn(&mut s, &[ReviewDecision::Denied]).await;
    assert_eq!(asked, 1, "only the retry outside the sandbox is asked");
    assert!(!outside.path().join("next-turn").exists());
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_never_and_forbidden_grant_nothing() {
    // Denied by the user: Codex's empty answer, and the write stays blocked.
    let outside = var_tmp();
    let mut s = setup_with(
        vec![
            ask_write("p1", outside.path()),
            MockResponse::text("denied"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        enable,
    )
    .await;
    let (events, asked) = turn(&mut s, &[ReviewDecision::Denied]).await;
    assert_eq!(asked, 1);
    assert!(!events
        .iter()
        .any(|e| matches!(e, EventMsg::PermissionsGranted { .. })));
    assert_eq!(
        last_outputs(&s)[0],
        r#"{"permissions":{"network":null,"file_system":null},"scope":"turn"}"#
    );
    s.runtime.stop();

    // `never`: not asked, nothing granted.
    let mut s = setup_with(
        vec![ask_write("p1", outside.path()), MockResponse::text("never")],
        AskForApproval::Never,
        SandboxMode::WorkspaceWrite,
        None,
        enable,
    )
    .await;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    assert_eq!(
        last_outputs(&s)[0],
        r#"{"permissions":{"network":null,"file_system":null},"scope":"turn"}"#
    );
    s.runtime.stop();

    // requirements.toml allows only read-only: refused before anyone is asked.
    let mut s = setup_with(
        vec![
            ask_write("p1", outside.path()),
            MockResponse::text("forbidden"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::ReadOnly,
        None,
        |settings| {
            enable(settings);
            settings.sandbox.grants_forbidden = true;
        },
    )
    .await;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    assert!(
        last_outputs(&s)[0].contains("requirements.toml allows only the read-only sandbox"),
        "{:?}",
        last_outputs(&s)
    );
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_get_a_clear_error_and_nothing_is_asked() {
    let outside = var_tmp();
    let secret = outside.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    let calls = [
        json!({"permissions": {}}),
        json!({"permissions": {"file_system": {"write": ["/no/such/dir"]}}}),
        json!({"permissions": {"file_system": {"write": [secret]}}}),
        json!({"permissions": {"file_system": {"read": [secret]}}}),
        json!({"permissions": {"network": {"enabled": "yes"}}}),
        json!({"permissions": {"network": {"enabled": true}}, "environment_id": "remote"}),
    ];
    let mut script: Vec<MockResponse> = calls
        .iter()
        .enumerate()
        .map(|(i, args)| {
            MockResponse::tool_calls(vec![(
                format!("p{i}"),
                "request_permissions".to_string(),
                args.to_string(),
            )])
        })
        .collect();
    script.push(MockResponse::text("done"));
    let deny = secret.clone();
    let mut s = setup_with(
        script,
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        move |settings| {
            enable(settings);
            settings.sandbox.deny_read = vec![deny];
        },
    )
    .await;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    let requests = s.mock.requests();
    let outputs: Vec<String> = requests[1..]
        .iter()
        .map(|r| tool_outputs(&r.body).last().unwrap().clone())
        .collect();
    let expected = [
        "needs at least one permission",
        "does not exist or is not a directory",
        "denied reads are policy restrictions",
        "denied reads are policy restrictions",
        "invalid arguments for request_permissions",
        "omit environment_id",
    ];
    for (output, want) in outputs.iter().zip(expected) {
        assert!(output.contains(want), "`{want}` not in {output}");
    }
    s.runtime.stop();
}

#[test]
fn exec_offers_codexs_spec_only_with_the_feature() {
    let h = Harness::new(vec![MockResponse::text("a"), MockResponse::text("b")]);
    let out = h.exec(&["hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = h.exec(&["--enable", "request_permissions_tool", "hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = h.mock.requests();
    let named = |body: &Value| -> Option<Value> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "request_permissions")
            .cloned()
    };
    assert_eq!(named(&requests[0].body), None, "off by default");
    let codex: Value = serde_json::from_str(include_str!("permissions_codex_spec.json")).unwrap();
    assert_eq!(named(&requests[1].body), Some(codex));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_server_approval_grants_for_the_session() {
    let outside = var_tmp();
    let write = |name: &str| {
        let argv = write_outside(outside.path(), name);
        shell(&format!("c_{name}"), &argv)
    };
    let harness = tokio::task::block_in_place(|| {
        Harness::with_config(
            vec![
                ask_write("p1", outside.path()),
                write("one"),
                MockResponse::text("granted"),
                write("two"),
                MockResponse::text("again"),
            ],
            "\n[features]\nrequest_permissions_tool = true\n\
         [sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n",
        )
    });
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "workspace-write", "approvalPolicy": "on-request"}),
        )
        .await;
    client.start_turn(&thread_id, "write outside").await;
    let asked = client
        .until(|m| m["method"] == "item/commandExecution/requestApproval")
        .await;
    let ask = asked.last().unwrap().clone();
    assert!(
        ask["params"]["command"]
            .as_str()
            .unwrap()
            .starts_with("request_permissions --write "),
        "{ask}"
    );
    client.send(json!({"id": ask["id"], "result": {"decision": "acceptForSession"}}));
    let seen = client.until_turn_completed(&thread_id).await;
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == "item/commandExecution/requestApproval"),
        "the write is not asked about again"
    );
    assert!(outside.path().join("one").exists());
    client.start_turn(&thread_id, "again").await;
    let seen = client.until_turn_completed(&thread_id).await;
    assert!(!seen
        .iter()
        .any(|m| m["method"] == "item/commandExecution/requestApproval"));
    assert!(outside.path().join("two").exists());
}
