//! Crash test: a real `troupe exec` against the mock model, killed with SIGKILL at many points
//! (after each of 20 tool calls, at timed instants, during a stream), then resumed. After each
//! kill, everything the model was sent is in the rollout exactly once (a request only goes
//! out once what it carries is committed); after the resume the thread completes and the
//! pre-crash history is still its exact prefix.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use troupe_actors::rollout_recorder::{loader, lock, replay::replay};
use troupe_messages::items::ResponseItem;
use troupe_mock_model::{AutoConfig, Behaviour, MockResponse};
use troupe_test_support::{stderr, Harness};

const TOOL_CALLS: usize = 20;

fn auto_harness() -> Harness {
    Harness::with_behaviour(
        Behaviour::Auto(AutoConfig {
            tool_calls: TOOL_CALLS,
            ..AutoConfig::default()
        }),
        "",
    )
}

fn spawn_exec(harness: &Harness, prompt: &str) -> Child {
    harness
        .command()
        .args([
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
        ])
        .arg(prompt)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// SIGKILL (std's `kill`) and reap.
fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn the_rollout(harness: &Harness) -> Option<PathBuf> {
    let mut all = harness.rollouts();
    assert!(all.len() <= 1, "{all:?}");
    all.pop()
}

fn history(path: &std::path::Path) -> Vec<ResponseItem> {
    let loaded = loader::load(path).unwrap_or_else(|e| panic!("{e}"));
    replay(&loaded.lines).history
}

fn as_json(items: &[ResponseItem]) -> Vec<serde_json::Value> {
    items
        .iter()
        .map(|i| serde_json::to_value(i).unwrap())
        .collect()
}

/// Each call once, each output once and after its call.
fn assert_each_once(items: &[ResponseItem], context: &str) {
    let mut calls = HashSet::new();
    let mut outputs = HashSet::new();
    for item in items {
        match item {
            ResponseItem::FunctionCall { call_id, .. } => {
                assert!(
                    calls.insert(call_id.clone()),
                    "{context}: call {call_id} twice"
                );
            }
            ResponseItem::FunctionCallOutput { call_id, .. } => {
                assert!(
                    calls.contains(call_id),
                    "{context}: output before call {call_id}"
                );
                assert!(
                    outputs.insert(call_id.clone()),
                    "{context}: output {call_id} twice"
                );
            }
            _ => {}
        }
    }
}

/// After a kill: what the model was last sent is exactly the start of the recorded history.
fn check_after_kill(harness: &Harness, context: &str) -> Vec<ResponseItem> {
    let Some(path) = the_rollout(harness) else {
        assert_eq!(
            harness.mock.request_count(),
            0,
            "{context}: requests but no rollout"
        );
        return Vec::new();
    };
    let items = history(&path);
    assert_each_once(&items, context);
    if let Some(last) = harness.mock.requests().last() {
        let sent = last.input();
        let recorded = as_json(&items);
        assert!(
            recorded.len() >= sent.len() && recorded[..sent.len()] == *sent,
            "{context}: the last request is not a prefix of the rollout\nsent {sent:#?}\nrecorded {recorded:#?}"
        );
    }
    items
}

/// Resumes the one thread and checks it completes with all 20 calls answered exactly once.
fn resume_and_complete(harness: &Harness, before: &[ResponseItem], context: &str) {
    let Some(path) = the_rollout(harness) else {
        return;
    };
    let id = loader::load(&path).unwrap().meta.thread_id.to_string();
    let output = harness.exec(&["--json", "resume", &id, "please continue"]);
    assert!(
        output.status.success(),
        "{context}: resume failed: {}",
        stderr(&output)
    );
    assert!(
        !lock::lock_path(&path).exists(),
        "{context}: lock left behind"
    );
    let after = history(&path);
    assert_eq!(
        as_json(&after[..before.len()]),
        as_json(before),
        "{context}: the pre-crash history changed"
    );
    assert_each_once(&after, context);
    let calls = after
        .iter()
        .filter(|i| matches!(i, ResponseItem::FunctionCall { .. }))
        .count();
    let outputs = after
        .iter()
        .filter(|i| matches!(i, ResponseItem::FunctionCallOutput { .. }))
        .count();
    assert_eq!((calls, outputs), (TOOL_CALLS, TOOL_CALLS), "{context}");
    assert_eq!(
        after
            .last()
            .and_then(ResponseItem::assistant_text)
            .as_deref(),
        Some("done"),
        "{context}"
    );
}

#[test]
fn killed_after_each_of_20_tool_calls_then_resumed() {
    for k in 1..=TOOL_CALLS {
        let context = format!("kill after tool call {k}");
        let harness = auto_harness();
        let mut child = spawn_exec(&harness, "run twenty commands");
        let stdout = child.stdout.take().unwrap();
        let mut seen = 0;
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let event: serde_json::Value = serde_json::from_str(&line).unwrap();
            if event["type"] == "item.completed" && event["item"]["type"] == "command_execution" {
                seen += 1;
                if seen == k {
                    break;
                }
            }
        }
        kill(child);
        assert_eq!(seen, k, "{context}: the run ended early");
        let before = check_after_kill(&harness, &context);
        resume_and_complete(&harness, &before, &context);
    }
}

#[test]
fn killed_at_timed_instants_then_resumed() {
    for delay_ms in [0u64, 10, 25, 50, 80, 120, 170, 230, 300, 400] {
        let context = format!("kill after {delay_ms} ms");
        let harness = auto_harness();
        let child = spawn_exec(&harness, "run twenty commands");
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill(child);
        let before = check_after_kill(&harness, &context);
        resume_and_complete(&harness, &before, &context);
    }
}

#[test]
fn killed_during_a_stream_then_resumed_with_a_torn_last_line() {
    let harness = Harness::new(vec![
        MockResponse::shell("call_1", &["sh", "-c", "echo one"]),
        MockResponse::text("this answer never finishes").stall_after(3),
        MockResponse::text("recovered"),
    ]);
    let child = spawn_exec(&harness, "start");
    let deadline = Instant::now() + Duration::from_secs(20);
    while harness.mock.request_count() < 2 {
        assert!(Instant::now() < deadline, "the second request never came");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The stream has started (its first deltas are out) and stalls: kill mid-stream.
    std::thread::sleep(Duration::from_millis(150));
    kill(child);
    let before = check_after_kill(&harness, "mid-stream");
    // After the initial context: the prompt, the call and its output; no partial answer.
    let prompt = before
        .iter()
        .position(|i| *i == ResponseItem::user_text("start"))
        .expect("the prompt is recorded");
    let tail: Vec<&str> = before[prompt + 1..]
        .iter()
        .map(|i| match i {
            ResponseItem::FunctionCall { .. } => "call",
            ResponseItem::FunctionCallOutput { .. } => "output",
            _ => "other",
        })
        .collect();
    assert_eq!(tail, ["call", "output"], "no partial answer kept");

    // A write cut short by the crash: half a line at the end of the file.
    let path = the_rollout(&harness).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"respo"#)
        .unwrap();
    drop(file);

    let id = loader::load(&path).unwrap().meta.thread_id.to_string();
    let output = harness.exec(&["resume", &id, "go on"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("incomplete"),
        "{}",
        stderr(&output)
    );
    let loaded = loader::load(&path).unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let after = replay(&loaded.lines).history;
    assert_eq!(as_json(&after[..before.len()]), as_json(&before));
    assert_eq!(
        after
            .last()
            .and_then(ResponseItem::assistant_text)
            .as_deref(),
        Some("recovered")
    );
    // The request after the resume carried the whole recorded history.
    let last = harness.mock.requests().pop().unwrap();
    assert_eq!(last.input(), as_json(&after[..after.len() - 1]).as_slice());
}
