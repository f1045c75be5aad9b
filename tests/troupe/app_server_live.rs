//! Live command output on the app-server wire: `item/commandExecution/outputDelta` while the
//! command runs (both sandbox backends, and PTY sessions of `exec_command`), bounded per command.

use crate::app_server_support::*;
use serde_json::{json, Value};
use std::time::Instant;
use troupe_mock_model::MockResponse;
use troupe_sandbox::live_output::STREAMED_OUTPUT_PER_COMMAND;

/// Messages of one turn, each with when it arrived.
async fn turn_with_arrivals(client: &mut Client, thread_id: &str) -> Vec<(Instant, Value)> {
    let mut seen = Vec::new();
    loop {
        let message = client.next().await;
        let done =
            message["method"] == "turn/completed" && message["params"]["threadId"] == thread_id;
        seen.push((Instant::now(), message));
        if done {
            return seen;
        }
    }
}

fn output_deltas(seen: &[(Instant, Value)]) -> Vec<(Instant, String)> {
    seen.iter()
        .filter(|(_, m)| m["method"] == "item/commandExecution/outputDelta")
        .map(|(at, m)| (*at, m["params"]["delta"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn command_completed(seen: &[(Instant, Value)]) -> (Instant, Value) {
    seen.iter()
        .find(|(_, m)| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
        })
        .cloned()
        .expect("the command's item/completed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_output_reaches_the_client_while_the_command_runs() {
    crate::use_sandbox_helper();
    // Unconfined (the `none` backend) and sandboxed (the `linux` backend's zygote).
    for sandbox in ["danger-full-access", "workspace-write"] {
        let harness = harness(vec![
            MockResponse::shell(
                "call_live",
                &["sh", "-c", "echo first; sleep 1; echo second >&2"],
            ),
            MockResponse::text("done"),
        ]);
        let mut server = start(&harness, Transport::Stdio, &[]).await;
        let mut client = server.connect().await;
        client.initialize().await;
        let thread_id = client
            .start_thread(
                harness.workdir.path(),
                json!({"sandbox": sandbox, "approvalPolicy": "never"}),
            )
            .await;
        client.start_turn(&thread_id, "run it").await;
        let seen = turn_with_arrivals(&mut client, &thread_id).await;
        let deltas = output_deltas(&seen);
        let (ended_at, ended) = command_completed(&seen);
        assert_eq!(
            ended["params"]["item"]["aggregatedOutput"], "first\nsecond\n",
            "{sandbox}: {ended}"
        );
        let first = deltas
            .iter()
            .find(|(_, text)| text.contains("first"))
            .unwrap_or_else(|| panic!("{sandbox}: no delta with `first` in {deltas:?}"));
        let early = ended_at.duration_since(first.0);
        assert!(
            early.as_millis() >= 500,
            "{sandbox}: `first` came only {early:?} before the command ended"
        );
        let streamed: String = deltas.iter().map(|(_, text)| text.as_str()).collect();
        assert_eq!(streamed, "first\nsecond\n", "{sandbox}");
        assert!(
            deltas.iter().all(|(at, _)| *at <= ended_at),
            "{sandbox}: a delta after the end"
        );
        let delta = &seen
            .iter()
            .find(|(_, m)| m["method"] == "item/commandExecution/outputDelta")
            .expect("a delta")
            .1;
        assert_eq!(delta["params"]["itemId"], "call_live", "{delta}");
        assert_eq!(delta["params"]["threadId"], json!(thread_id), "{delta}");
        assert!(delta["params"]["turnId"].as_str().is_some(), "{delta}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_output_is_streamed_only_up_to_the_cap() {
    let harness = harness(vec![
        MockResponse::shell(
            "call_flood",
            &[
                "sh",
                "-c",
                "head -c 10000000 /dev/zero | tr '\\0' x; echo; echo tail-marker",
            ],
        ),
        MockResponse::text("done"),
    ]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&thread_id, "flood").await;
    let seen = turn_with_arrivals(&mut client, &thread_id).await;
    let streamed: usize = output_deltas(&seen).iter().map(|(_, t)| t.len()).sum();
    assert_eq!(streamed, STREAMED_OUTPUT_PER_COMMAND, "streamed bytes");
    // The end still carries the command's (head+tail) output, its last line included.
    let (_, ended) = command_completed(&seen);
    let output = ended["params"]["item"]["aggregatedOutput"]
        .as_str()
        .expect("output");
    assert!(
        output.ends_with("tail-marker\n"),
        "{}",
        &output[output.len().saturating_sub(100)..]
    );
    assert!(output.contains("bytes truncated"));
}

/// `exec_command` runs its command in a PTY: what it prints is streamed while it runs, also
/// after the call that started it returned (the session lives on under a session id and
/// `write_stdin` polls it), and all of it exactly once, before its item completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pty_session_output_reaches_the_client_while_it_runs() {
    let begin = json!({
        "cmd": "echo pty-first; sleep 1; echo pty-second; sleep 1; echo pty-third",
        "login": false,
        "yield_time_ms": 500
    });
    let poll = json!({"session_id": 1, "chars": "", "yield_time_ms": 10000});
    let harness = harness(vec![
        MockResponse::tool_calls(vec![("call_pty", "exec_command", begin.to_string())]),
        MockResponse::tool_calls(vec![("call_poll", "write_stdin", poll.to_string())]),
        MockResponse::text("done"),
    ]);
    let mut server = start(
        &harness,
        Transport::Stdio,
        &["-c", "shell_tool_type=\"exec_command\""],
    )
    .await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&thread_id, "run it in a terminal").await;
    let seen = turn_with_arrivals(&mut client, &thread_id).await;
    let deltas = output_deltas(&seen);
    let (ended_at, ended) = command_completed(&seen);
    assert_eq!(ended["params"]["item"]["id"], "call_pty", "{ended}");
    let output = ended["params"]["item"]["aggregatedOutput"]
        .as_str()
        .expect("output");
    assert!(output.contains("pty-third"), "{output:?}");
    let arrived = |marker: &str| {
        deltas
            .iter()
            .find(|(_, text)| text.contains(marker))
            .unwrap_or_else(|| panic!("no delta with `{marker}` in {deltas:?}"))
            .0
    };
    // `pty-first` while `exec_command` still waited, `pty-second` after it returned and
    // while `write_stdin` polled: each about a second before the command ended.
    for marker in ["pty-first", "pty-second"] {
        let early = ended_at.duration_since(arrived(marker));
        assert!(
            early.as_millis() >= 500,
            "`{marker}` came only {early:?} before the command ended"
        );
    }
    let streamed: String = deltas.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(streamed, output, "streamed pieces against the whole output");
    assert!(
        deltas.iter().all(|(at, _)| *at <= ended_at),
        "a delta after the end"
    );
    let delta = &seen
        .iter()
        .find(|(_, m)| m["method"] == "item/commandExecution/outputDelta")
        .expect("a delta")
        .1;
    assert_eq!(delta["params"]["itemId"], "call_pty", "{delta}");
}
