//! Helpers of the sub-agent tests: scripted collaboration calls and reading the rollouts.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use troupe_mock_model::MockResponse;
use troupe_test_support::{tool_outputs, Harness};

pub fn call(id: &str, name: &str, args: Value) -> (String, String, String) {
    (id.to_string(), name.to_string(), args.to_string())
}

pub fn spawn_call(id: &str, name: &str, task: &str, fork: &str) -> (String, String, String) {
    call(
        id,
        "spawn_agent",
        json!({"task_name": name, "message": task, "fork_turns": fork}),
    )
}

pub fn wait_call(id: &str) -> MockResponse {
    MockResponse::tool_calls(vec![call(id, "wait_agent", json!({"timeout_ms": 30000}))])
}

/// The first line (`session_meta`) of every rollout.
pub fn metas(harness: &Harness) -> Vec<Value> {
    harness
        .rollouts()
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("rollout readable");
            let first = text.lines().next().expect("meta line");
            serde_json::from_str::<Value>(first).expect("meta is JSON")["payload"].clone()
        })
        .collect()
}

/// Every `function_call_output` text of the rollouts of children (by task path).
pub fn child_outputs(harness: &Harness) -> Vec<(String, Vec<String>)> {
    harness
        .rollouts()
        .iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).ok()?;
            let mut lines = text.lines();
            let meta: Value = serde_json::from_str(lines.next()?).ok()?;
            let task_path = meta["payload"]["agent"]["task_path"].as_str()?.to_string();
            let outputs = lines
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|l| l["payload"]["type"] == "function_call_output")
                .map(|l| {
                    l["payload"]["output"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect();
            Some((task_path, outputs))
        })
        .collect()
}

pub fn root_tool_outputs(harness: &Harness) -> String {
    harness
        .mock
        .requests()
        .iter()
        .filter(|r| is_root(&r.body))
        .flat_map(|r| tool_outputs(&r.body))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A request of the root: no user message of it is a child's task.
pub fn is_root(body: &Value) -> bool {
    !body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "message" && i["role"] == "user")
        .any(|i| i["content"].to_string().contains("[You are agent"))
}

/// Nanosecond stamps `start N` / `end N` printed by a child's command.
pub fn interval(outputs: &[String]) -> Option<(u128, u128)> {
    let text: Vec<String> = outputs
        .iter()
        .map(|o| {
            serde_json::from_str::<Value>(o)
                .ok()
                .and_then(|v| v["output"].as_str().map(str::to_string))
                .unwrap_or_else(|| o.clone())
        })
        .collect();
    let text = text.join("\n");
    let stamp = |word: &str| {
        text.split(word)
            .nth(1)?
            .split_whitespace()
            .next()?
            .trim_matches(|c: char| !c.is_ascii_digit())
            .parse::<u128>()
            .ok()
    };
    Some((stamp("start ")?, stamp("end ")?))
}

/// The tool outputs of every request of the child at `task_path`.
pub fn child_request_outputs(harness: &Harness, task_path: &str) -> String {
    let marker = format!("[You are agent `{task_path}`");
    harness
        .mock
        .requests()
        .iter()
        .filter(|r| r.body["input"].to_string().contains(&marker))
        .flat_map(|r| tool_outputs(&r.body))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every rollout line (parsed) of the child at `task_path`.
pub fn child_lines(harness: &Harness, task_path: &str) -> Vec<Value> {
    for path in harness.rollouts() {
        let text = std::fs::read_to_string(&path).expect("rollout readable");
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if lines
            .first()
            .map(|m| m["payload"]["agent"]["task_path"] == task_path)
            == Some(true)
        {
            return lines;
        }
    }
    panic!("no rollout for {task_path}");
}
