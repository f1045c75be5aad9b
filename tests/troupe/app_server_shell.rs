//! `thread/shellCommand`: the user's own command runs in the thread as Codex shows it (a turn
//! of its own, a `userShell` command item with a `user-shell-<UUIDv7>` id), honours
//! `timeoutMs`, is seen by the model on the next turn and stays in the thread's history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use serde_json::{json, Value};
use troupe_mock_model::MockResponse;

fn command_items<'a>(seen: &'a [Value], method: &str) -> Vec<&'a Value> {
    seen.iter()
        .filter(|m| m["method"] == method && m["params"]["item"]["type"] == "commandExecution")
        .map(|m| &m["params"]["item"])
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_shell_command_runs_in_a_turn_of_its_own_as_codex_shows_it() {
    let harness = harness(vec![MockResponse::text("saw your command")]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(harness.workdir.path(), json!({"sandbox": "read-only"}))
        .await;

    let answer = client
        .request(
            "thread/shellCommand",
            json!({"threadId": thread_id, "command": "echo shell-marker | tr a-z A-Z"}),
        )
        .await;
    assert_eq!(answer, json!({}));
    let seen = client.until_turn_completed(&thread_id).await;
    let started = command_items(&seen, "item/started");
    let completed = command_items(&seen, "item/completed");
    assert_eq!((started.len(), completed.len()), (1, 1), "{seen:?}");
    let item = completed[0];
    let id = item["id"].as_str().unwrap();
    let uuid = uuid::Uuid::parse_str(id.strip_prefix("user-shell-").unwrap()).unwrap();
    assert_eq!(uuid.get_version_num(), 7, "{id}");
    assert_eq!(started[0]["id"], item["id"]);
    assert_eq!(item["source"], "userShell");
    assert_eq!(started[0]["source"], "userShell");
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], 0);
    assert!(
        item["aggregatedOutput"]
            .as_str()
            .unwrap()
            .contains("SHELL-MARKER"),
        "{item}"
    );
    // Its turn: opened before the item, closed after it, its id the call's UUID.
    let turn_started = seen.iter().find(|m| m["method"] == "turn/started").unwrap();
    assert_eq!(
        turn_started["params"]["turn"]["id"],
        json!(uuid.to_string())
    );
    let turn_completed = seen.last().unwrap();
    assert_eq!(turn_completed["params"]["turn"]["status"], "completed");
    assert!(seen
        .iter()
        .filter(|m| m["method"] == "item/started" || m["method"] == "item/completed")
        .all(|m| m["params"]["turnId"] == json!(uuid.to_string())));

    // `timeoutMs` ends a command that would outlast the test's patience.
    client
        .request(
            "thread/shellCommand",
            json!({"threadId": thread_id, "command": "sleep 120", "timeoutMs": 300}),
        )
        .await;
    let seen = client.until_turn_completed(&thread_id).await;
    let ended = command_items(&seen, "item/completed");
    assert_eq!(ended[0]["status"], "failed", "{seen:?}");
    assert_eq!(ended[0]["exitCode"], Value::Null);
    let negative = client
        .request_error(
            "thread/shellCommand",
            json!({"threadId": thread_id, "command": "true", "timeoutMs": -1}),
        )
        .await;
    assert!(negative.contains("timeoutMs"), "{negative}");

    // The model sees the command and its output on the next turn.
    client.start_turn(&thread_id, "what did I run?").await;
    client.until_turn_completed(&thread_id).await;
    let requests = harness.mock.requests();
    let body = requests.last().unwrap().body.to_string();
    assert!(body.contains("user_shell_command"), "{body}");
    assert!(body.contains("SHELL-MARKER"), "{body}");

    // The history shows the command as its item, not as a message the user typed.
    let read = client
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    let turns = read["thread"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 3, "{read}");
    assert_eq!(turns[0]["items"][0]["type"], "commandExecution", "{read}");
    assert_eq!(turns[0]["items"][0]["source"], "userShell", "{read}");
    assert_eq!(turns[0]["items"][0]["id"], json!(id), "{read}");
    assert_eq!(turns[2]["items"][0]["type"], "userMessage", "{read}");
    assert_eq!(
        turns[2]["items"][0]["content"][0]["text"], "what did I run?",
        "{read}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_command_is_refused_while_a_turn_runs() {
    let harness = harness(vec![MockResponse::shell("s1", &["sleep", "60"])]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    let turn = client.start_turn(&thread_id, "sleep").await;
    let refused = client
        .request_error(
            "thread/shellCommand",
            json!({"threadId": thread_id, "command": "echo no"}),
        )
        .await;
    assert!(refused.contains(&turn), "{refused}");
    client
        .request(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn}),
        )
        .await;
    client.until_turn_completed(&thread_id).await;
}
