//! Approval flows end to end against the mock model, through the runtime API (the user's
//! decisions are `Op::ExecApproval`) and through `troupe exec`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::approval_support::*;
use serde_json::json;
use std::time::Duration;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ops::{Op, ReviewDecision};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, tool_outputs, Harness};

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
