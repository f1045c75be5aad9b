//! Sub-agents through the real binary (issue #14): a root spawning children that run in
//! parallel, limits, bad input, narrowing, forks and the cancellation tree. The mock answers
//! each child from its own script, chosen by a word of the child's task.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support as support;

use crate::subagents_support::*;
use serde_json::Value;
use support::{stderr, Harness};
use troupe_mock_model::MockResponse;

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
    let started = std::time::Instant::now();
    let out = harness.exec(&["ROOT: split the work"]);
    let wall = started.elapsed();
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
    let first_start = intervals.iter().map(|i| i.0).min().unwrap();
    // Figures for the report (`--nocapture`), not assertions: the machine is shared.
    eprintln!(
        "8 children × `sleep 1`: exec wall {:.2} s; command starts spread over {:.0} ms",
        wall.as_secs_f64(),
        (last_start - first_start) as f64 / 1e6
    );
    // exec showed the children's activity, prefixed with their path.
    let err = stderr(&out);
    assert!(err.contains("[/root/w3] exec"), "{err}");

    // `list --tree`: the root, then its 8 children indented under it in path order.
    let list = harness.command().args(["list", "--tree"]).output().unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    let text = support::stdout(&list);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9, "{text}");
    assert!(lines[0].starts_with(root_id.as_str().unwrap()), "{text}");
    for (i, line) in lines[1..].iter().enumerate() {
        assert!(line.starts_with(&format!("└ /root/w{} (", i + 1)), "{text}");
        assert!(line.contains("completed"), "{text}");
    }
}

#[test]
fn fork_turns_all_shares_the_parents_prefix_and_none_starts_fresh() {
    let harness = Harness::new(vec![
        MockResponse::shell("c0", &["echo", "parent-context"]),
        MockResponse::tool_calls(vec![
            spawn_call("s1", "forked", "fork-all-marker", "all"),
            spawn_call("s2", "fresh", "fork-none-marker", "none"),
        ]),
        wait_call("w1"),
        wait_call("w2"),
        wait_call("w3"),
        MockResponse::text("forks done"),
    ]);
    harness
        .mock
        .route("fork-all-marker", vec![MockResponse::text("forked done")]);
    harness
        .mock
        .route("fork-none-marker", vec![MockResponse::text("fresh done")]);
    let out = harness.exec(&["ROOT-PROMPT: look around"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = harness.mock.requests();
    // The root's request that answered with the spawns.
    let parent = &requests[1].body;
    assert!(parent["input"].to_string().contains("parent-context"));
    let child_request = |path: &str| {
        let marker = format!("[You are agent `{path}`");
        requests
            .iter()
            .find(|r| r.body["input"].to_string().contains(&marker))
            .unwrap_or_else(|| panic!("no request of {path}"))
            .body
            .clone()
    };
    let forked = child_request("/root/forked");
    let parent_input = parent["input"].as_array().unwrap();
    let forked_input = forked["input"].as_array().unwrap();
    assert!(forked_input.len() > parent_input.len());
    // Byte-identical: same instructions, same tools, and the parent's input as a prefix.
    assert_eq!(
        serde_json::to_string(&forked["instructions"]).unwrap(),
        serde_json::to_string(&parent["instructions"]).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&forked["tools"]).unwrap(),
        serde_json::to_string(&parent["tools"]).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&forked_input[..parent_input.len()]).unwrap(),
        serde_json::to_string(&parent_input[..]).unwrap()
    );
    let fresh = child_request("/root/fresh");
    let fresh_text = fresh["input"].to_string();
    assert!(!fresh_text.contains("ROOT-PROMPT"), "{fresh_text}");
    assert!(!fresh_text.contains("parent-context"), "{fresh_text}");
    let outputs = root_tool_outputs(&harness);
    assert!(
        outputs.contains("forked done") && outputs.contains("fresh done"),
        "{outputs}"
    );
}

#[test]
fn exec_json_shows_collab_tool_calls_as_codex_items() {
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call("s1", "helper", "json-marker", "none")]),
        wait_call("w1"),
        MockResponse::text("json done"),
    ]);
    harness
        .mock
        .route("json-marker", vec![MockResponse::text("helper answer")]);
    let out = harness.exec(&["--json", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = support::json_lines(&out);
    let collab: Vec<&Value> = lines
        .iter()
        .filter(|l| l["item"]["type"] == "collab_tool_call")
        .collect();
    let kinds: Vec<(String, String, String)> = collab
        .iter()
        .map(|l| {
            (
                l["type"].as_str().unwrap().to_string(),
                l["item"]["tool"].as_str().unwrap().to_string(),
                l["item"]["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("item.started", "spawn_agent", "in_progress"),
        ("item.completed", "spawn_agent", "completed"),
        ("item.started", "wait_agent", "in_progress"),
        ("item.completed", "wait_agent", "completed"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(kinds, expected);
    let spawned = &collab[1]["item"];
    assert_eq!(spawned["prompt"], "json-marker");
    let child_id = spawned["receiver_thread_ids"][0].as_str().unwrap();
    let root_id = lines[0]["thread_id"].as_str().unwrap();
    assert_eq!(spawned["sender_thread_id"], root_id);
    let waited = &collab[3]["item"]["agents_states"][child_id];
    assert_eq!(waited["status"], "completed");
    assert_eq!(waited["message"], "helper answer");
}

#[test]
fn the_command_budget_is_shared_by_all_agents() {
    let spawns = (1..=4)
        .map(|i| {
            spawn_call(
                &format!("s{i}"),
                &format!("b{i}"),
                &format!("budget-{i}-marker"),
                "none",
            )
        })
        .collect();
    let mut root = vec![MockResponse::tool_calls(spawns)];
    for i in 0..5 {
        root.push(wait_call(&format!("wait{i}")));
    }
    root.push(MockResponse::text("budget held"));
    let harness = Harness::with_config(root, "\n[agents]\nmax_concurrent_commands = 2\n");
    for i in 1..=4 {
        harness.mock.route(
            &format!("budget-{i}-marker"),
            vec![
                MockResponse::shell(
                    &format!("c{i}"),
                    &[
                        "sh",
                        "-c",
                        "echo start $(date +%s%N); sleep 0.4; echo end $(date +%s%N)",
                    ],
                ),
                MockResponse::text(&format!("budget-done-{i}")),
            ],
        );
    }
    let out = harness.exec(&["ROOT: budget"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let intervals: Vec<(u128, u128)> = child_outputs(&harness)
        .iter()
        .map(|(path, outs)| interval(outs).unwrap_or_else(|| panic!("{path}: {outs:?}")))
        .collect();
    assert_eq!(intervals.len(), 4);
    // At no instant did more than 2 commands run.
    let most = intervals
        .iter()
        .map(|(start, _)| {
            intervals
                .iter()
                .filter(|(s, e)| s <= start && start < e)
                .count()
        })
        .max()
        .unwrap();
    assert!(most <= 2, "{most} commands ran at once: {intervals:?}");
    assert_eq!(
        most, 2,
        "the budget let fewer run than it allows: {intervals:?}"
    );
}
