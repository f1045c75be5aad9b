//! Sub-agents seen by an app-server client that follows only the root of the tree: their
//! approval requests reach it (naming the agent's thread) and its answers reach the agent;
//! their reports to the root are `subAgentActivity` items, never `userMessage` items; and
//! `troupe list` titles a sub-agent by its task; "approved for the session" holds for the tree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::{harness, start, Transport};
use crate::subagents_support::{spawn_call, wait_call};
use serde_json::{json, Value};
use troupe_mock_model::MockResponse;

const REPORT_TAG: &str = "<subagent_notification>";
const PREAMBLE: &str = "[You are agent";

fn items<'a>(seen: &'a [Value], kind: &'a str) -> impl Iterator<Item = &'a Value> {
    seen.iter()
        .filter(|m| m["method"] == "item/completed")
        .map(|m| &m["params"]["item"])
        .filter(move |item| item["type"] == kind)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_client_answers_its_sub_agents_approval_and_reads_its_report_as_activity() {
    crate::use_sandbox_helper();
    let harness = harness(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "sp1",
            "t1",
            "agent-task-marker: touch a file",
            "none",
        )]),
        wait_call("wt1"),
        wait_call("wt2"),
        MockResponse::text("root done"),
    ]);
    harness.mock.route(
        "agent-task-marker",
        vec![
            MockResponse::shell("tc1", &["touch", "agent-approved"]),
            MockResponse::text("child finished the job"),
        ],
    );
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let root = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "workspace-write", "approvalPolicy": "untrusted"}),
        )
        .await;
    client.start_turn(&root, "delegate the job").await;

    // The child's request comes to the root's client, naming the child's thread and path.
    let asked = client
        .until(|m| m["method"] == "item/commandExecution/requestApproval")
        .await;
    let ask = asked.last().unwrap().clone();
    let child = ask["params"]["threadId"].as_str().unwrap().to_string();
    assert_ne!(child, root, "{ask}");
    assert!(
        ask["params"]["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("agent /root/t1"),
        "{ask}"
    );
    assert!(ask["params"]["command"]
        .as_str()
        .unwrap()
        .contains("touch agent-approved"));
    client.send(json!({"id": ask["id"], "result": {"decision": "accept"}}));
    let done = client.until_turn_completed(&root).await;
    let end = done.last().unwrap().clone();
    let mut seen = asked;
    seen.extend(done);
    assert_eq!(end["params"]["turn"]["status"], "completed", "{end}");
    assert!(
        seen.iter().any(|m| m["method"] == "serverRequest/resolved"
            && m["params"]["requestId"] == ask["id"]
            && m["params"]["threadId"] == json!(child)),
        "no resolution for the child's request"
    );
    assert!(
        harness.workdir.path().join("agent-approved").exists(),
        "the approved command of the sub-agent did not run"
    );

    // The child's report is an activity item, not something the user typed.
    for item in items(&seen, "userMessage") {
        assert!(!item.to_string().contains(REPORT_TAG), "{item}");
    }
    let activity: Vec<&Value> = items(&seen, "subAgentActivity").collect();
    assert_eq!(activity.len(), 1, "{seen:#?}");
    assert_eq!(activity[0]["kind"], "completed");
    assert_eq!(activity[0]["agentPath"], "/root/t1");
    assert_eq!(activity[0]["agentThreadId"], json!(child));
    assert_eq!(activity[0]["message"], "child finished the job");
    // What the model read is unchanged: the report as the runtime wrote it.
    let model_saw = harness
        .mock
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains(REPORT_TAG));
    assert!(model_saw, "the root's model never got the report");

    // Read back from the rollout: the same.
    let read = client
        .request(
            "thread/read",
            json!({"threadId": root, "includeTurns": true}),
        )
        .await;
    let turns = read["thread"]["turns"].to_string();
    assert!(turns.contains("\"subAgentActivity\""), "{turns}");
    assert!(!turns.contains(REPORT_TAG), "{turns}");
    let child_read = client
        .request(
            "thread/read",
            json!({"threadId": child, "includeTurns": true}),
        )
        .await;
    let child_turns = child_read["thread"]["turns"].to_string();
    assert!(!child_turns.contains(PREAMBLE), "{child_turns}");
    assert!(child_turns.contains("agent-task-marker"), "{child_turns}");
    drop(client);
    drop(server);

    // The index titles the sub-agent by its task.
    let list = harness.command().args(["list", "--json"]).output().unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{listed}");
    let titles: Vec<String> = listed
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["title"].to_string())
        .collect();
    assert_eq!(titles.len(), 2, "{listed}");
    assert!(
        titles
            .iter()
            .any(|t| t == "\"agent-task-marker: touch a file\""),
        "{titles:?}"
    );
    for title in &titles {
        assert!(
            !title.contains(PREAMBLE) && !title.contains(REPORT_TAG),
            "{title}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_for_session_given_to_one_agent_holds_for_its_sibling() {
    crate::use_sandbox_helper();
    let harness = harness(vec![
        MockResponse::tool_calls(vec![spawn_call("sp1", "t1", "sibling-one: log", "none")]),
        wait_call("wt1"),
        wait_call("wt2"),
        MockResponse::tool_calls(vec![spawn_call("sp2", "t2", "sibling-two: log", "none")]),
        wait_call("wt3"),
        wait_call("wt4"),
        MockResponse::text("root done"),
    ]);
    let same_command = ["sh", "-c", "echo ran >> tree-log"];
    for marker in ["sibling-one", "sibling-two"] {
        harness.mock.route(
            marker,
            vec![
                MockResponse::shell(&format!("{marker}-c1"), &same_command),
                MockResponse::text("logged"),
            ],
        );
    }
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let root = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "workspace-write", "approvalPolicy": "untrusted"}),
        )
        .await;
    client.start_turn(&root, "log twice").await;
    let asked = client
        .until(|m| m["method"] == "item/commandExecution/requestApproval")
        .await;
    let ask = asked.last().unwrap().clone();
    assert!(
        ask["params"]["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("agent /root/t1"),
        "{ask}"
    );
    client.send(json!({"id": ask["id"], "result": {"decision": "acceptForSession"}}));
    let done = client
        .until(|m| {
            m["method"] == "item/commandExecution/requestApproval"
                || (m["method"] == "turn/completed" && m["params"]["threadId"] == json!(root))
        })
        .await;
    let last = done.last().unwrap();
    assert_eq!(
        last["method"], "turn/completed",
        "the sibling asked again: {last}"
    );
    assert_eq!(last["params"]["turn"]["status"], "completed", "{last}");
    let log = std::fs::read_to_string(harness.workdir.path().join("tree-log")).unwrap();
    assert_eq!(log, "ran\nran\n", "both siblings ran the command");
}
