//! The supervisor web page with trees of agents and other processes, in headless Chromium
//! (tests/web/tree_cases.mjs): sub-agents asking approval at once, and threads another
//! `troupe web` on the same home holds. The helpers are web_page.rs's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::subagents_support::{spawn_call, wait_call};
use crate::web_page::{require_browser_tools, run_page_cases, start_web};
use troupe_mock_model::MockResponse;

/// Two sub-agents ask to run a command at once (workspace-write, untrusted): the page queues
/// both, naming each agent, a page opened afterwards gets them too, and the answers reach the
/// agents, whose commands run, so the root's turn completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_approves_sub_agents_requests_and_the_tree_finishes() {
    require_browser_tools();
    crate::use_sandbox_helper();
    let root = vec![
        MockResponse::tool_calls(vec![
            spawn_call("sp1", "t1", "tree-child-1-marker: touch a file", "none"),
            spawn_call("sp2", "t2", "tree-child-2-marker: touch a file", "none"),
        ]),
        wait_call("wt1"),
        wait_call("wt2"),
        wait_call("wt3"),
        MockResponse::text("tree done"),
    ];
    let harness = crate::app_server_support::harness(root);
    for i in 1..=2 {
        harness.mock.route(
            &format!("tree-child-{i}-marker"),
            vec![
                MockResponse::shell(&format!("tc{i}"), &["touch", &format!("sub-approved-{i}")]),
                MockResponse::text(&format!("child {i} done")),
            ],
        );
    }
    let server = start_web(&harness, "info").await;
    run_page_cases(
        server,
        harness.workdir.path(),
        "subagent_approvals",
        serde_json::Value::Null,
    )
    .await;
    for i in 1..=2 {
        assert!(
            harness
                .workdir
                .path()
                .join(format!("sub-approved-{i}"))
                .exists(),
            "sub-agent {i}'s approved command did not run"
        );
    }
}

/// Another `troupe web` on the same home holds two threads: one idle there, one running a
/// command. This server's page shows the idle one as it ended (not running, not under the
/// "running" filter), the running one running, says of both that another process holds them,
/// and sees the running one end when it is interrupted there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_held_by_another_process_show_honest_status() {
    require_browser_tools();
    crate::use_sandbox_helper();
    let harness = crate::app_server_support::harness(vec![]);
    harness
        .mock
        .route("held-idle-task", vec![MockResponse::text("idle answer")]);
    harness.mock.route(
        "held-running-task",
        vec![MockResponse::shell("hr1", &["sleep", "120"])],
    );
    // The other process first: it holds the thread index, so this one reads the files.
    let other = start_web(&harness, "info").await;
    let server = start_web(&harness, "info").await;
    let other_url = other.url.clone();
    run_page_cases(
        server,
        harness.workdir.path(),
        "held_elsewhere",
        serde_json::json!({ "otherUrl": other_url }),
    )
    .await;
    other.stop().await;
}
