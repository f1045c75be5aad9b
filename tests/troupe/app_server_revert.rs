//! Codex's `thread/revert` through the real binary: the conversation of a loaded thread cut
//! back to before a turn (the response in Codex's shape, then `thread/reverted`), the files
//! left as they are, a turn id that is not the thread's refused, and the cut undone with
//! `troupe/thread/rewind {undo}`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use serde_json::{json, Value};
use std::path::PathBuf;
use troupe_mock_model::MockResponse;

fn assert_codex_shape(file: &str, value: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../app-server-protocol/tests/codex-schema/v2")
        .join(file);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("Codex's schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{file}: {errors:?} in {value}");
}

async fn turn_count(client: &mut Client, thread_id: &str) -> usize {
    let read = client
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    read["thread"]["turns"].as_array().unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_revert_cuts_the_conversation_and_leaves_the_files() {
    let h = harness(vec![
        MockResponse::text("one"),
        MockResponse::shell("c2", &["sh", "-c", "echo two > two.txt"]),
        MockResponse::text("two"),
    ]);
    let ws = std::fs::canonicalize(h.workdir.path()).unwrap();
    let mut server = start(&h, Transport::Unix, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let id = client
        .start_thread(
            &ws,
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&id, "turn one").await;
    client.until_turn_completed(&id).await;
    let second = client.start_turn(&id, "turn two").await;
    client.until_turn_completed(&id).await;
    assert_eq!(turn_count(&mut client, &id).await, 2);

    let bogus = client
        .request_error(
            "thread/revert",
            json!({"threadId": id, "beforeTurnId": "00000000-0000-7000-8000-000000000000"}),
        )
        .await;
    assert!(bogus.contains("is not a turn of thread"), "{bogus}");

    let reverted = client
        .request(
            "thread/revert",
            json!({"threadId": id, "beforeTurnId": second}),
        )
        .await;
    assert_codex_shape("ThreadRevertResponse.json", &reverted);
    assert_eq!(reverted["thread"]["id"], json!(id));
    assert_eq!(reverted["turnsBackwardsCursor"], Value::Null);
    let notified = client
        .until(|m| m["method"] == "thread/reverted")
        .await
        .pop()
        .unwrap();
    assert_codex_shape("ThreadRevertedNotification.json", &notified["params"]);
    assert_eq!(notified["params"]["threadId"], json!(id));

    assert_eq!(turn_count(&mut client, &id).await, 1);
    assert_eq!(
        std::fs::read_to_string(ws.join("two.txt")).unwrap(),
        "two\n",
        "a revert leaves the files"
    );

    client
        .request(
            "troupe/thread/rewind",
            json!({"threadId": id, "undo": true}),
        )
        .await;
    assert_eq!(turn_count(&mut client, &id).await, 2);
}
