//! `troupe app-server` with many threads and several clients: events in order at every
//! client, disconnects, slow clients, idle unload and reload. Real binary, mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use serde_json::json;
use std::collections::HashMap;
use troupe_mock_model::{AutoConfig, MockResponse};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_on_twenty_threads_see_every_event_in_order() {
    for transport in [Transport::Unix, Transport::Ws] {
        let harness = auto_harness(AutoConfig {
            tool_calls: 2,
            ..AutoConfig::default()
        });
        let mut server = start(&harness, transport, &[]).await;
        let mut a = server.connect().await;
        let mut b = server.connect().await;
        a.initialize().await;
        b.initialize().await;
        let mut threads = Vec::new();
        for _ in 0..20 {
            let id = a
                .start_thread(
                    harness.workdir.path(),
                    json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
                )
                .await;
            b.request("thread/resume", json!({"threadId": id})).await;
            threads.push(id);
        }
        for id in &threads {
            a.start_turn(id, "go").await;
        }
        let mut done_a = 0;
        let mut per_thread_a: HashMap<String, Vec<String>> = HashMap::new();
        while done_a < threads.len() {
            let m = a.next().await;
            if let Some(t) = m["params"]["threadId"].as_str() {
                let key = format!(
                    "{} {}",
                    m["method"].as_str().unwrap_or(""),
                    m["params"]["item"]["id"].as_str().unwrap_or("")
                );
                per_thread_a.entry(t.to_string()).or_default().push(key);
                if m["method"] == "turn/completed" {
                    done_a += 1;
                }
            }
        }
        let mut done_b = 0;
        let mut per_thread_b: HashMap<String, Vec<String>> = HashMap::new();
        while done_b < threads.len() {
            let m = b.next().await;
            if let Some(t) = m["params"]["threadId"].as_str() {
                let key = format!(
                    "{} {}",
                    m["method"].as_str().unwrap_or(""),
                    m["params"]["item"]["id"].as_str().unwrap_or("")
                );
                per_thread_b.entry(t.to_string()).or_default().push(key);
                if m["method"] == "turn/completed" {
                    done_b += 1;
                }
            }
        }
        for id in &threads {
            let seen_a = &per_thread_a[id];
            assert_eq!(
                seen_a, &per_thread_b[id],
                "thread {id} differs between clients ({transport:?})"
            );
            assert_eq!(
                seen_a
                    .iter()
                    .filter(|m| m.starts_with("item/completed call_"))
                    .count(),
                2,
                "{seen_a:?}"
            );
            assert!(
                seen_a
                    .first()
                    .expect("events")
                    .starts_with("thread/status/changed"),
                "{seen_a:?}"
            );
            assert!(
                seen_a.last().expect("events").starts_with("turn/completed"),
                "{seen_a:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_loses_nothing_on_resume() {
    for transport in [Transport::Unix, Transport::Ws] {
        let harness = harness(vec![
            MockResponse::shell("call_1", &["sh", "-c", "sleep 1; echo slept"]),
            MockResponse::text("finished while away"),
        ]);
        let mut server = start(&harness, transport, &[]).await;
        let mut first = server.connect().await;
        first.initialize().await;
        let thread_id = first
            .start_thread(
                harness.workdir.path(),
                json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
            )
            .await;
        first.start_turn(&thread_id, "work").await;
        first
            .until(|m| {
                m["method"] == "item/started" && m["params"]["item"]["type"] == "commandExecution"
            })
            .await;
        drop(first);
        let mut second = server.connect().await;
        second.initialize().await;
        let resumed = second
            .request("thread/resume", json!({"threadId": thread_id}))
            .await;
        let turns = resumed["thread"]["turns"]
            .as_array()
            .expect("turns")
            .clone();
        let status = resumed["thread"]["status"].clone();
        let seen = if status["type"] == "active" {
            assert_eq!(
                turns.last().expect("open turn")["status"],
                "inProgress",
                "{resumed}"
            );
            second.until_turn_completed(&thread_id).await
        } else {
            Vec::new()
        };
        let read = second
            .request(
                "thread/read",
                json!({"threadId": thread_id, "includeTurns": true}),
            )
            .await;
        let items = read["thread"]["turns"][0]["items"]
            .as_array()
            .expect("items")
            .clone();
        let command = items
            .iter()
            .find(|i| i["type"] == "commandExecution")
            .expect("command item");
        assert_eq!(command["aggregatedOutput"], "slept\n", "{read}");
        assert!(
            items.iter().any(|i| i["text"] == "finished while away"),
            "{read} {seen:?}"
        );
        assert_eq!(read["thread"]["turns"][0]["status"], "completed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_thread_is_unloaded_and_reloaded_with_identical_history() {
    let harness = harness(vec![
        MockResponse::text("first answer"),
        MockResponse::text("second answer"),
    ]);
    let mut server = start(&harness, Transport::Unix, &["--idle-unload-secs", "1"]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&thread_id, "first").await;
    client.until_turn_completed(&thread_id).await;
    let before = client
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    let rollout = std::path::PathBuf::from(before["thread"]["path"].as_str().expect("path"));
    let mut unloaded = false;
    for _ in 0..100 {
        let read = client
            .request("thread/read", json!({"threadId": thread_id}))
            .await;
        if read["thread"]["status"] == json!({"type": "notLoaded"}) {
            unloaded = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(unloaded, "the idle thread was not unloaded");
    let bytes_unloaded = std::fs::read(&rollout).expect("rollout");
    // Used again: reloaded transparently, and this client (never resubscribed) hears it.
    client.start_turn(&thread_id, "second").await;
    let seen = client.until_turn_completed(&thread_id).await;
    assert!(
        seen.iter()
            .any(|m| m["method"] == "item/completed"
                && m["params"]["item"]["text"] == "second answer")
    );
    let requests = harness.mock.requests();
    assert_eq!(requests.len(), 2);
    let first_input = requests[0].body["input"].as_array().expect("input").clone();
    let second_input = requests[1].body["input"].as_array().expect("input").clone();
    // Byte-identical history: what the model saw before is exactly the start of what it sees now.
    for (index, item) in first_input.iter().enumerate() {
        assert_eq!(
            item.to_string(),
            second_input[index].to_string(),
            "history item {index} changed"
        );
    }
    let after = client
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    assert_eq!(after["thread"]["turns"][0], before["thread"]["turns"][0]);
    let bytes_after = std::fs::read(&rollout).expect("rollout");
    assert!(
        bytes_after.starts_with(&bytes_unloaded),
        "the rollout was rewritten, not appended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_gets_a_lag_notice_and_the_others_go_on() {
    let harness = auto_harness(AutoConfig {
        tool_calls: 0,
        answer_bytes: 400_000,
        answer_deltas: 20_000,
        ..AutoConfig::default()
    });
    let mut server = start(&harness, Transport::Unix, &[]).await;
    let mut reader = server.connect().await;
    let mut sleeper = server.connect().await;
    reader.initialize().await;
    sleeper.initialize().await;
    let thread_id = reader
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    sleeper
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    sleeper.pause();
    reader.start_turn(&thread_id, "talk a lot").await;
    let seen = reader.until_turn_completed(&thread_id).await;
    let deltas = seen
        .iter()
        .filter(|m| m["method"] == "item/agentMessage/delta")
        .count();
    assert_eq!(deltas, 20_000, "the reading client got every delta");
    sleeper.resume();
    let lagged = sleeper.until(|m| m["method"] == "troupe/lagged").await;
    let notice = lagged.last().expect("notice");
    assert_eq!(notice["params"]["threadId"], json!(thread_id));
    // It catches up from the rollout.
    let resumed = sleeper
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    let turns = resumed["thread"]["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0]["status"], "completed");
    assert_eq!(
        turns[0]["items"][1]["text"].as_str().map(str::len),
        Some(400_000)
    );
}
