//! Every message `troupe app-server` sends in a rich session — a turn with per-turn overrides,
//! three commands, an approval and a patch; an interrupted command; sub-agents; fork, resume,
//! read, list — validates against Codex 0.169's JSON schema (vendored in
//! `app-server-protocol/tests/codex-schema/`): each response against its method's response type, each
//! notification and server request against the type Codex's schema gives its method.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use crate::subagents_support::{spawn_call, wait_call};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;
use troupe_mock_model::{events, MockResponse};

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../app-server-protocol/tests/codex-schema")
}

fn read_schema(file: &str) -> Value {
    let text = std::fs::read_to_string(schema_dir().join(file)).expect("vendored schema");
    serde_json::from_str(&text).expect("schema is JSON")
}

/// Codex's response type of each method this session calls.
fn response_file(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "v1/InitializeResponse.json",
        "thread/start" => "v2/ThreadStartResponse.json",
        "thread/resume" => "v2/ThreadResumeResponse.json",
        "thread/fork" => "v2/ThreadForkResponse.json",
        "thread/list" => "v2/ThreadListResponse.json",
        "thread/read" => "v2/ThreadReadResponse.json",
        "thread/archive" => "v2/ThreadArchiveResponse.json",
        "thread/unarchive" => "v2/ThreadUnarchiveResponse.json",
        "thread/name/set" => "v2/ThreadSetNameResponse.json",
        "thread/loaded/list" => "v2/ThreadLoadedListResponse.json",
        "turn/start" => "v2/TurnStartResponse.json",
        "turn/interrupt" => "v2/TurnInterruptResponse.json",
        "thread/shellCommand" => "v2/ThreadShellCommandResponse.json",
        "model/list" => "v2/ModelListResponse.json",
        "config/read" => "v2/ConfigReadResponse.json",
        _ => return None,
    })
}

/// The schema of `params` of `method` in a bundle of `oneOf` messages (Codex's
/// `ServerNotification.json` / `ServerRequest.json`), with the bundle's definitions.
fn params_schema(bundle: &Value, method: &str) -> Option<Value> {
    let entry = bundle["oneOf"]
        .as_array()?
        .iter()
        .find(|entry| entry["properties"]["method"]["enum"][0] == method)?;
    Some(json!({
        "$schema": bundle["$schema"],
        "definitions": bundle["definitions"],
        "$ref": entry["properties"]["params"]["$ref"],
    }))
}

fn problems(schema: &Value, instance: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("Codex's schema compiles");
    validator
        .iter_errors(instance)
        .map(|err| format!("{} at {}", err, err.instance_path()))
        .collect()
}

/// Runs the thread's turn to its end, accepting every approval; interrupts the turn once a
/// command containing `interrupt_on` starts.
async fn drive(client: &mut Client, thread_id: &str, interrupt_on: Option<&str>) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = client.next().await;
        seen.push(message.clone());
        if message.get("id").is_some() && message.get("method").is_some() {
            client.send(json!({"id": message["id"], "result": {"decision": "accept"}}));
        }
        let item = &message["params"]["item"];
        if let Some(marker) = interrupt_on {
            if message["method"] == "item/started"
                && item["type"] == "commandExecution"
                && item["command"].as_str().unwrap_or("").contains(marker)
            {
                let turn_id = message["params"]["turnId"].clone();
                client
                    .request(
                        "turn/interrupt",
                        json!({"threadId": thread_id, "turnId": turn_id}),
                    )
                    .await;
            }
        }
        if message["method"] == "turn/completed" && message["params"]["threadId"] == thread_id {
            return seen;
        }
    }
}

fn text(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_of_a_rich_session_validates_against_codexs_schema() {
    crate::use_sandbox_helper();
    let patch = "*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\n";
    let harness = harness(vec![
        MockResponse::tool_calls(vec![
            ("c1", "shell", json!({"command": ["ls"]}).to_string()),
            (
                "c2",
                "shell",
                json!({"command": ["bash", "-lc", "touch made.txt"]}).to_string(),
            ),
            (
                "c3",
                "shell",
                json!({"command": ["bash", "-lc", "cat made.txt"]}).to_string(),
            ),
        ]),
        MockResponse::sse(vec![
            events::created("resp_patch"),
            events::custom_tool_call_done("p1", "apply_patch", patch),
            events::completed("resp_patch", 10, 0, 5, 0),
        ]),
        MockResponse::text("first turn done"),
        MockResponse::shell("c4", &["bash", "-lc", "sleep 30"]),
        MockResponse::tool_calls(vec![spawn_call(
            "sp1",
            "helper",
            "agent-task-marker: say hello",
            "none",
        )]),
        wait_call("wt1"),
        MockResponse::text("root done"),
    ]);
    harness.mock.route(
        "agent-task-marker",
        vec![MockResponse::text("hello from the child")],
    );
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "read-only", "approvalPolicy": "never"}),
        )
        .await;

    // A turn with per-turn overrides (as Codex's clients send them), three commands, an
    // approval and a patch.
    client
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": text("work"),
                   "sandboxPolicy": {"type": "workspaceWrite"}, "approvalPolicy": "untrusted",
                   "effort": "low", "model": null, "cwd": null, "summary": null,
                   "personality": null, "serviceTier": null, "outputSchema": null}),
        )
        .await;
    let first = drive(&mut client, &thread_id, None).await;
    assert!(
        first
            .iter()
            .any(|m| m["method"] == "item/commandExecution/requestApproval"),
        "an approval was asked"
    );
    assert!(harness.workdir.path().join("patched.txt").exists());
    let first_turn = first
        .iter()
        .find(|m| m["method"] == "turn/completed")
        .unwrap()["params"]["turn"]["id"]
        .clone();

    // An interrupted command.
    client.start_turn(&thread_id, "wait").await;
    let second = drive(&mut client, &thread_id, Some("sleep 30")).await;
    assert_eq!(
        second.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );

    // Sub-agents.
    client.start_turn(&thread_id, "delegate").await;
    drive(&mut client, &thread_id, None).await;

    // The user's own command, in a turn of its own.
    client
        .request(
            "thread/shellCommand",
            json!({"threadId": thread_id, "command": "echo from-the-user", "timeoutMs": 5000}),
        )
        .await;
    client.until_turn_completed(&thread_id).await;

    // Fork, resume, read, list, and the rest.
    let fork = client
        .request(
            "thread/fork",
            json!({"threadId": thread_id, "lastTurnId": first_turn}),
        )
        .await;
    let fork_id = fork["thread"]["id"].as_str().unwrap().to_string();
    client
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    client
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    client.request("thread/list", json!({})).await;
    client.request("thread/loaded/list", json!({})).await;
    client.request("model/list", json!({})).await;
    client.request("config/read", json!({})).await;
    client
        .request(
            "thread/name/set",
            json!({"threadId": fork_id, "name": "the fork"}),
        )
        .await;
    client
        .request("thread/archive", json!({"threadId": fork_id}))
        .await;
    client
        .request("thread/unarchive", json!({"threadId": fork_id}))
        .await;
    // Whatever came after the last response.
    while let Ok(message) =
        tokio::time::timeout(std::time::Duration::from_millis(300), client.next()).await
    {
        drop(message);
    }

    let notifications = read_schema("ServerNotification.json");
    let requests = read_schema("ServerRequest.json");
    let mut failures = Vec::new();
    let mut methods_seen = BTreeSet::new();
    for message in &client.received {
        let method = message["method"].as_str();
        let (kind, schema, instance) = match (method, message.get("id")) {
            (Some(method), Some(_)) => (
                "request",
                params_schema(&requests, method),
                &message["params"],
            ),
            (Some(method), None) if method.starts_with("troupe/") => continue,
            (Some(method), None) => (
                "notification",
                params_schema(&notifications, method),
                &message["params"],
            ),
            (None, Some(id)) => {
                let Some(result) = message.get("result") else {
                    failures.push(format!("an error answer: {message}"));
                    continue;
                };
                let sent = id.as_i64().and_then(|id| client.sent_methods.get(&id));
                let Some(sent) = sent else { continue };
                let Some(file) = response_file(sent) else {
                    failures.push(format!("no Codex response type for {sent}"));
                    continue;
                };
                methods_seen.insert(sent.clone());
                ("response", Some(read_schema(file)), result)
            }
            (None, None) => {
                failures.push(format!("neither method nor id: {message}"));
                continue;
            }
        };
        if let Some(method) = method {
            methods_seen.insert(method.to_string());
        }
        let Some(schema) = schema else {
            failures.push(format!("{kind} {method:?} is not in Codex's schema"));
            continue;
        };
        for problem in problems(&schema, instance) {
            failures.push(format!("{kind} {method:?}: {problem}\n  in {message}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The validation can fail: a notification missing what Codex requires does.
    let turn_completed = params_schema(&notifications, "turn/completed").unwrap();
    assert!(!problems(&turn_completed, &json!({"threadId": "t"})).is_empty());
    assert!(client.received.len() > 50, "{}", client.received.len());
    // The session exercised what it says it does.
    for method in [
        "item/commandExecution/requestApproval",
        "item/started",
        "item/completed",
        "turn/completed",
        "thread/tokenUsage/updated",
        "thread/started",
        "thread/fork",
        "thread/resume",
    ] {
        assert!(
            methods_seen.contains(method),
            "{method} in {methods_seen:?}"
        );
    }
    // The fields Codex's schema leaves optional are sent as Codex sends them.
    let user_shell = client
        .received
        .iter()
        .any(|m| m["method"] == "item/completed" && m["params"]["item"]["source"] == "userShell");
    assert!(user_shell, "a userShell command item");
    for message in &client.received {
        if message["method"] == "item/completed" {
            assert!(
                message["params"]
                    .as_object()
                    .unwrap()
                    .contains_key("contentTokenCount"),
                "{message}"
            );
        }
        if message["method"] == "thread/tokenUsage/updated" {
            for side in ["total", "last"] {
                let usage = &message["params"]["tokenUsage"][side];
                assert!(usage["cacheWriteInputTokens"].is_i64(), "{message}");
            }
        }
    }
    let spawned = client.received.iter().any(|m| {
        m["method"] == "item/completed" && m["params"]["item"]["type"] == "collabAgentToolCall"
    });
    assert!(spawned, "a sub-agent was spawned");
}
