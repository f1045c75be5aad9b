//! Sub-agents through the real binary (issue #14): a root spawning children that run in
//! parallel, limits, bad input, narrowing, forks and the cancellation tree. The mock answers
//! each child from its own script, chosen by a word of the child's task.

mod support;

use serde_json::{json, Value};
use support::{stderr, tool_outputs, Harness};
use troupe_mock_model::MockResponse;

fn call(id: &str, name: &str, args: Value) -> (String, String, String) {
    (id.to_string(), name.to_string(), args.to_string())
}

fn spawn_call(id: &str, name: &str, task: &str, fork: &str) -> (String, String, String) {
    call(
        id,
        "spawn_agent",
        json!({"task_name": name, "message": task, "fork_turns": fork}),
    )
}

fn wait_call(id: &str) -> MockResponse {
    MockResponse::tool_calls(vec![call(id, "wait_agent", json!({"timeout_ms": 30000}))])
}

/// The first line (`session_meta`) of every rollout.
fn metas(harness: &Harness) -> Vec<Value> {
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
fn child_outputs(harness: &Harness) -> Vec<(String, Vec<String>)> {
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

fn root_tool_outputs(harness: &Harness) -> String {
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
fn is_root(body: &Value) -> bool {
    !body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "message" && i["role"] == "user")
        .any(|i| i["content"].to_string().contains("[You are agent"))
}

/// Nanosecond stamps `start N` / `end N` printed by a child's command.
fn interval(outputs: &[String]) -> Option<(u128, u128)> {
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

#[test]
fn eight_children_run_in_parallel_and_report_to_the_root() {
    let spawns = (1..=8)
        .map(|i| {
            spawn_call(
                &format!("s{i}"),
                &format!("w{i}"),
                &format!("job-{i}-marker: run the command"),
                "none",
            )
        })
        .collect();
    let mut root = vec![MockResponse::tool_calls(spawns)];
    for i in 0..9 {
        root.push(wait_call(&format!("wait{i}")));
    }
    root.push(MockResponse::text("all eight reported"));
    let harness = Harness::new(root);
    for i in 1..=8 {
        harness.mock.route(
            &format!("job-{i}-marker"),
            vec![
                MockResponse::shell(
                    &format!("c{i}"),
                    &[
                        "sh",
                        "-c",
                        "echo start $(date +%s%N); sleep 1; echo end $(date +%s%N)",
                    ],
                ),
                MockResponse::text(&format!("done-{i}")),
            ],
        );
    }
    let out = harness.exec(&["ROOT: split the work"]);
    assert!(out.status.success(), "exec failed: {}", stderr(&out));
    assert_eq!(support::stdout(&out).trim(), "all eight reported");

    // The waits returned every child's final answer.
    let outputs = root_tool_outputs(&harness);
    for i in 1..=8 {
        assert!(
            outputs.contains(&format!("done-{i}")),
            "no done-{i} in {outputs}"
        );
        assert!(outputs.contains(&format!("/root/w{i}")), "{outputs}");
    }
    // 9 rollouts: the root and 8 children linked to it.
    let metas = metas(&harness);
    assert_eq!(metas.len(), 9, "{metas:?}");
    let root_meta = metas
        .iter()
        .find(|m| m.get("agent").is_none())
        .expect("the root's rollout");
    let root_id = root_meta["thread_id"].clone();
    let children: Vec<&Value> = metas.iter().filter(|m| m.get("agent").is_some()).collect();
    assert_eq!(children.len(), 8);
    for child in &children {
        assert_eq!(child["parent_thread_id"], root_id);
        assert_eq!(child["agent"]["depth"], 1);
        assert_eq!(child["agent"]["root_thread_id"], root_id);
    }
    // Their commands overlapped: every one started before any one ended.
    let intervals: Vec<(u128, u128)> = child_outputs(&harness)
        .iter()
        .map(|(path, outs)| interval(outs).unwrap_or_else(|| panic!("{path}: {outs:?}")))
        .collect();
    assert_eq!(intervals.len(), 8);
    let last_start = intervals.iter().map(|i| i.0).max().unwrap();
    let first_end = intervals.iter().map(|i| i.1).min().unwrap();
    assert!(
        last_start < first_end,
        "the children's commands did not all overlap: {intervals:?}"
    );
    // exec showed the children's activity, prefixed with their path.
    let err = stderr(&out);
    assert!(err.contains("[/root/w3] exec"), "{err}");
}
