//! App-server items and listings as Codex shapes them: per-file diffs in `fileChange` items,
//! collaboration calls as `collabAgentToolCall` items, a sub-agent's task path in its thread's
//! `source`, `thread/list`'s `modelProviders` filter applied before paging, and hook runs as
//! `hook/started` / `hook/completed`.

use crate::app_server_support::*;
use serde_json::{json, Value};
use troupe_mock_model::{events, MockResponse};

fn find<'a>(seen: &'a [Value], method: &str, pred: impl Fn(&Value) -> bool) -> &'a Value {
    seen.iter()
        .find(|m| m["method"] == method && pred(&m["params"]["item"]))
        .unwrap_or_else(|| panic!("no {method} matching in {seen:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_change_item_carries_each_files_diff() {
    let patch = "*** Begin Patch\n*** Add File: added.txt\n+hello\n*** Update File: old.txt\n@@\n-before\n+after\n*** Delete File: gone.txt\n*** End Patch\n";
    let custom_call = MockResponse::sse(vec![
        events::created("resp_patch"),
        events::custom_tool_call_done("p1", "apply_patch", patch),
        events::completed("resp_patch", 10, 0, 5, 0),
    ]);
    let harness = harness(vec![custom_call, MockResponse::text("patched")]);
    std::fs::write(harness.workdir.path().join("old.txt"), "keep\nbefore\n").unwrap();
    std::fs::write(harness.workdir.path().join("gone.txt"), "bye\n").unwrap();
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "workspace-write", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&thread_id, "patch it").await;
    let seen = client.until_turn_completed(&thread_id).await;
    let item = &find(&seen, "item/completed", |i| i["type"] == "fileChange")["params"]["item"];
    let changes = item["changes"].as_array().expect("changes");
    let by_name = |name: &str| {
        changes
            .iter()
            .find(|c| c["path"].as_str().is_some_and(|p| p.ends_with(name)))
            .unwrap_or_else(|| panic!("{name} missing in {item}"))
    };
    let added = by_name("added.txt");
    assert_eq!(added["kind"], json!({"type": "add"}));
    assert_eq!(added["diff"], "hello\n");
    let updated = by_name("old.txt");
    assert_eq!(updated["kind"]["type"], "update");
    let diff = updated["diff"].as_str().unwrap();
    assert!(diff.starts_with("@@"), "{diff}");
    assert!(
        diff.contains("-before\n") && diff.contains("+after\n"),
        "{diff}"
    );
    let deleted = by_name("gone.txt");
    assert_eq!(deleted["kind"], json!({"type": "delete"}));
    assert_eq!(deleted["diff"], "bye\n");
    // The started item already has them (the change is planned before it is written).
    let started = &find(&seen, "item/started", |i| i["type"] == "fileChange")["params"]["item"];
    assert_eq!(started["changes"], item["changes"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collaboration_calls_are_collab_items_and_a_sub_agent_shows_its_task_path() {
    let spawn = (
        "s1".to_string(),
        "spawn_agent".to_string(),
        json!({"task_name": "helper", "message": "child-marker: answer", "fork_turns": "none"})
            .to_string(),
    );
    let wait = (
        "w1".to_string(),
        "wait_agent".to_string(),
        json!({"timeout_ms": 30000}).to_string(),
    );
    let harness = harness(vec![
        MockResponse::tool_calls(vec![spawn]),
        MockResponse::tool_calls(vec![wait]),
        MockResponse::text("root done"),
    ]);
    harness
        .mock
        .route("child-marker", vec![MockResponse::text("child done")]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let root = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&root, "split the work").await;
    let seen = client.until_turn_completed(&root).await;

    let collab = |m: &Value| m["type"] == "collabAgentToolCall";
    let spawn_started =
        &find(&seen, "item/started", |i| collab(i) && i["id"] == "s1")["params"]["item"];
    assert_eq!(spawn_started["tool"], "spawnAgent", "{spawn_started}");
    assert_eq!(spawn_started["status"], "inProgress");
    assert_eq!(spawn_started["senderThreadId"], json!(root));
    assert_eq!(spawn_started["prompt"], "child-marker: answer");
    let spawned =
        &find(&seen, "item/completed", |i| collab(i) && i["id"] == "s1")["params"]["item"];
    assert_eq!(spawned["status"], "completed", "{spawned}");
    let child = spawned["receiverThreadIds"][0]
        .as_str()
        .unwrap_or_else(|| panic!("no receiver: {spawned}"))
        .to_string();
    let waited = &find(&seen, "item/completed", |i| collab(i) && i["id"] == "w1")["params"]["item"];
    assert_eq!(waited["tool"], "wait", "{waited}");
    assert_eq!(
        waited["agentsStates"][&child]["status"], "completed",
        "{waited}"
    );
    assert_eq!(
        waited["agentsStates"][&child]["message"], "child done",
        "{waited}"
    );

    // The child's thread says where it sits: Codex's sub-agent source, its task path as
    // `agent_path`.
    let read = client
        .request("thread/read", json!({"threadId": child}))
        .await;
    let spawn_source = &read["thread"]["source"]["subAgent"]["thread_spawn"];
    assert_eq!(spawn_source["agent_path"], "/root/helper", "{read}");
    assert_eq!(spawn_source["parent_thread_id"], json!(root), "{read}");
    assert_eq!(spawn_source["depth"], 1, "{read}");
    let root_read = client
        .request("thread/read", json!({"threadId": root}))
        .await;
    assert_eq!(root_read["thread"]["source"], "appServer", "{root_read}");
    // thread/read rebuilds the root's turns from its rollout with the same collab items.
    let rebuilt = client
        .request(
            "thread/read",
            json!({"threadId": root, "includeTurns": true}),
        )
        .await;
    let items = rebuilt["thread"]["turns"][0]["items"]
        .as_array()
        .expect("items");
    assert!(
        items.iter().any(|i| collab(i) && i["id"] == "w1"),
        "{rebuilt}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_filter_applies_before_paging() {
    let harness = harness(vec![]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let mut mock_threads = Vec::new();
    for _ in 0..3 {
        let id = client
            .start_thread(harness.workdir.path(), json!({"modelProvider": "mock"}))
            .await;
        mock_threads.push(id);
        client
            .start_thread(harness.workdir.path(), json!({"modelProvider": "openai"}))
            .await;
    }
    let mut listed = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let page = client
            .request(
                "thread/list",
                json!({"modelProviders": ["mock"], "limit": 2, "cursor": cursor}),
            )
            .await;
        let data = page["data"].as_array().expect("data");
        pages += 1;
        if page["nextCursor"].is_string() {
            assert_eq!(
                data.len(),
                2,
                "a page short of its limit while more follow: {page}"
            );
        }
        for thread in data {
            assert_eq!(thread["modelProvider"], "mock", "{thread}");
            listed.push(thread["id"].as_str().unwrap().to_string());
        }
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(pages, 2);
    listed.sort();
    mock_threads.sort();
    assert_eq!(listed, mock_threads);
}

/// Each hook run is a `hook/started` then a `hook/completed` carrying Codex's `HookRunSummary`:
/// the event, the config file, the turn, and what the hook decided and said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_runs_are_hook_started_and_completed_notifications() {
    use crate::hooks_support::{add_hooks, hook, script};
    let harness = harness(vec![
        MockResponse::shell("c1", &["touch", "made"]),
        MockResponse::text("done"),
    ]);
    let quiet = script(&harness, "quiet.sh", "exit 0\n");
    let block = script(&harness, "block.sh", "echo 'no touching' >&2\nexit 2\n");
    add_hooks(
        &harness,
        &(hook("UserPromptSubmit", None, &quiet, 10)
            + &hook("PreToolUse", Some("Bash"), &block, 10)),
    );
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    let turn_id = client.start_turn(&thread_id, "touch it").await;
    let seen = client.until_turn_completed(&thread_id).await;
    assert!(!harness.workdir.path().join("made").exists());
    let hooks: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"].as_str().is_some_and(|m| m.starts_with("hook/")))
        .collect();
    let summary: Vec<(String, String, String)> = hooks
        .iter()
        .map(|m| {
            let run = &m["params"]["run"];
            (
                m["method"].as_str().unwrap_or("").to_string(),
                run["eventName"].as_str().unwrap_or("").to_string(),
                run["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected = [
        ("hook/started", "userPromptSubmit", "running"),
        ("hook/completed", "userPromptSubmit", "completed"),
        ("hook/started", "preToolUse", "running"),
        ("hook/completed", "preToolUse", "blocked"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(summary, expected, "{hooks:#?}");
    let config = harness.home.path().join("config.toml");
    for (i, message) in hooks.iter().enumerate() {
        let params = &message["params"];
        assert_eq!(params["threadId"], json!(thread_id), "{message}");
        assert_eq!(params["turnId"], json!(turn_id), "{message}");
        let run = &params["run"];
        assert_eq!(
            run["id"],
            hooks[i - i % 2]["params"]["run"]["id"],
            "{message}"
        );
        assert_eq!(run["displayOrder"], json!(i / 2), "{message}");
        assert_eq!(run["handlerType"], "command");
        assert_eq!(run["executionMode"], "sync");
        assert_eq!(run["scope"], "turn");
        assert_eq!(run["sourcePath"], json!(config.display().to_string()));
        assert!(run["startedAt"].as_i64().is_some(), "{message}");
        if message["method"] == "hook/completed" {
            assert!(run["durationMs"].as_i64().is_some(), "{message}");
            assert!(run["completedAt"].as_i64().is_some(), "{message}");
        }
    }
    assert_eq!(hooks[1]["params"]["run"]["entries"], json!([]));
    let entries = &hooks[3]["params"]["run"]["entries"];
    assert_eq!(entries[0]["kind"], "feedback", "{entries}");
    assert!(
        entries[0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("no touching"),
        "{entries}"
    );
}
