//! Codex's item and error fields Troupe fills, through the real binary and against Codex's
//! schema: an MCP call is an `mcpToolCall` item (server, tool, arguments, result, duration),
//! and a failed turn's error names Codex's kind of failure (`codexErrorInfo`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use crate::mcp_support::{lit, npm_server};
use serde_json::{json, Value};
use std::path::PathBuf;
use troupe_mock_model::{error_body, MockResponse};

/// Problems of `params` against the type Codex's schema gives notification `method`.
fn notification_problems(method: &str, params: &Value) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../app-server-protocol/tests/codex-schema/ServerNotification.json");
    let bundle: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let entry = bundle["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["properties"]["method"]["enum"][0] == method)
        .unwrap_or_else(|| panic!("{method} is not in Codex's schema"));
    let schema = json!({
        "$schema": bundle["$schema"],
        "definitions": bundle["definitions"],
        "$ref": entry["properties"]["params"]["$ref"],
    });
    let validator = jsonschema::validator_for(&schema).expect("Codex's schema compiles");
    validator
        .iter_errors(params)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

fn assert_valid(message: &Value) {
    let method = message["method"].as_str().unwrap();
    let problems = notification_problems(method, &message["params"]);
    assert!(problems.is_empty(), "{method}: {problems:?} in {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_is_codexs_mcp_tool_call_item() {
    let harness = harness(vec![
        MockResponse::tool_calls(vec![(
            "m1",
            "mcp__everything__echo",
            r#"{"message":"hello items"}"#,
        )]),
        MockResponse::text("done"),
    ]);
    let config_path = harness.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.everything]\ncommand = {}\nstartup_timeout_sec = 60\n\
         default_tools_approval_mode = \"approve\"\n",
        lit(&npm_server("mcp-server-everything"))
    ));
    std::fs::write(&config_path, config).unwrap();
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(harness.workdir.path(), json!({"approvalPolicy": "never"}))
        .await;
    client.start_turn(&thread_id, "echo").await;
    let messages = client.until_turn_completed(&thread_id).await;
    let items: Vec<&Value> = messages
        .iter()
        .filter(|m| m["params"]["item"]["type"] == "mcpToolCall")
        .collect();
    assert_eq!(items.len(), 2, "{messages:?}");
    for message in &items {
        assert_valid(message);
    }
    let started = &items[0]["params"]["item"];
    assert_eq!(items[0]["method"], "item/started");
    assert_eq!(started["server"], "everything");
    assert_eq!(started["tool"], "echo");
    assert_eq!(started["arguments"], json!({"message": "hello items"}));
    assert_eq!(started["status"], "inProgress");
    let completed = &items[1]["params"]["item"];
    assert_eq!(items[1]["method"], "item/completed");
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["error"], Value::Null);
    assert!(completed["durationMs"].as_i64().is_some(), "{completed}");
    let text = completed["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("hello items"), "{completed}");

    // The turn as read back from the rollout has the same item.
    let read = client
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    let recorded: Vec<&Value> = read["thread"]["turns"][0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "mcpToolCall")
        .collect();
    assert_eq!(recorded.len(), 1, "{read}");
    assert_eq!(recorded[0]["result"], completed["result"]);
    assert!(recorded[0]["durationMs"].as_i64().is_some(), "{read}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_names_codexs_kind_of_failure() {
    let harness = harness(vec![MockResponse::http(
        400,
        error_body(
            "invalid_request_error",
            "bad input",
            "invalid_request_error",
        ),
    )]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client.start_thread(harness.workdir.path(), json!({})).await;
    client.start_turn(&thread_id, "fail").await;
    let messages = client.until_turn_completed(&thread_id).await;
    let error = messages
        .iter()
        .find(|m| m["method"] == "error")
        .expect("an error notification");
    assert_valid(error);
    assert_eq!(error["params"]["error"]["codexErrorInfo"], "badRequest");
    assert_eq!(error["params"]["willRetry"], false);
    let completed = messages.last().unwrap();
    assert_valid(completed);
    let turn = &completed["params"]["turn"];
    assert_eq!(turn["status"], "failed", "{completed}");
    assert_eq!(turn["error"]["codexErrorInfo"], "badRequest");
    assert!(
        turn["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bad input"),
        "{turn}"
    );
}
