//! Two Python clients written for Codex's app-server, from the package index and unchanged
//! (`tests/app_server_clients/`, installed by `scripts/install-test-deps`), drive the real
//! `troupe app-server` against the scripted mock: a turn with three commands and an
//! approval, an interrupt, sub-agents, fork, resume, read and list — over stdio, and over
//! WebSocket for the client that has it. Every step must pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use crate::subagents_support::{spawn_call, wait_call};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;
use troupe_mock_model::MockResponse;
use troupe_test_support::{Harness, KEY_VAR};

/// The steps of `app_server_sdk.py`.
const ALL_STEPS: [&str; 7] = [
    "turn_with_three_calls",
    "approval",
    "interrupt",
    "sub_agents",
    "fork",
    "resume",
    "read_and_list",
];

/// The steps of `unofficial_sdk.py`: that client's models, generated from an older Codex
/// schema, reject Codex 0.169's approval requests and `subAgentActivity` items (see the
/// script).
const UNOFFICIAL_STEPS: [&str; 5] = [
    "turn_with_three_calls",
    "interrupt",
    "fork",
    "resume",
    "read_and_list",
];

fn clients_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/app_server_clients")
}

/// The mock's answers to the scenario the scripts play (see `common.py`); the sub-agent
/// turn only `with_agents`.
fn scenario(with_agents: bool) -> Harness {
    let shell = |id: &str, argv: Value| {
        (
            id.to_string(),
            "shell".to_string(),
            json!({"command": argv}).to_string(),
        )
    };
    let harness = harness(vec![
        MockResponse::tool_calls(vec![
            shell("c1", json!(["ls"])),
            shell("c2", json!(["bash", "-lc", "touch made.txt"])),
            shell("c3", json!(["bash", "-lc", "cat made.txt"])),
        ]),
        MockResponse::text("first turn done"),
        MockResponse::shell("c4", &["bash", "-lc", "sleep 30"]),
    ]);
    if with_agents {
        harness.mock.push(MockResponse::tool_calls(vec![spawn_call(
            "sp1",
            "helper",
            "agent-task-marker: say hello",
            "none",
        )]));
        harness.mock.push(wait_call("wt1"));
        harness.mock.push(MockResponse::text("root done"));
    }
    harness.mock.push(MockResponse::text("after resume"));
    harness.mock.route(
        "agent-task-marker",
        vec![MockResponse::text("hello from the child")],
    );
    harness
}

/// Runs `script` with `transport`; returns its steps (name → ok) and its whole output.
async fn run_script(
    harness: &Harness,
    script: &str,
    transport: &str,
    ws: Option<(String, &str)>,
) -> (Vec<(String, bool)>, String) {
    let python = clients_dir().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-deps",
        python.display()
    );
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(clients_dir().join(script))
        .arg(transport)
        .current_dir(clients_dir())
        .env("TROUPE_BIN", env!("CARGO_BIN_EXE_troupe"))
        .env("TROUPE_HOME", harness.home.path())
        .env("TROUPE_TEST_WORKDIR", harness.workdir.path())
        .env(KEY_VAR, "test-key")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some((url, token)) = ws {
        cmd.env("TROUPE_WS_URL", url).env("TROUPE_WS_TOKEN", token);
    }
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), cmd.output())
        .await
        .expect("the client finishes in time")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let text = format!(
        "{script} {transport} (exit {:?})\nstdout:\n{stdout}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    let steps = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|step| {
            (
                step["step"].as_str().unwrap_or_default().to_string(),
                step["ok"] == true,
            )
        })
        .collect();
    (steps, text)
}

fn assert_every_step_passed(expected: &[&str], steps: &[(String, bool)], output: &str) {
    for name in expected {
        let passed = steps.iter().any(|(step, ok)| step == name && *ok);
        assert!(passed, "step {name} did not pass:\n{output}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_app_server_sdk_works_unchanged_over_stdio() {
    let harness = scenario(true);
    let (steps, output) = run_script(&harness, "app_server_sdk.py", "stdio", None).await;
    assert_every_step_passed(&ALL_STEPS, &steps, &output);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_app_server_sdk_works_unchanged_over_websocket() {
    let harness = scenario(true);
    let server = start(&harness, Transport::Ws, &[]).await;
    let url = format!("ws://{}", server.ws_addr.clone().expect("ws address"));
    let (steps, output) = run_script(&harness, "app_server_sdk.py", "ws", Some((url, TOKEN))).await;
    assert_every_step_passed(&ALL_STEPS, &steps, &output);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_python_sdk_unofficial_works_unchanged_over_stdio() {
    let harness = scenario(false);
    let (steps, output) = run_script(&harness, "unofficial_sdk.py", "stdio", None).await;
    assert_every_step_passed(&UNOFFICIAL_STEPS, &steps, &output);
}
