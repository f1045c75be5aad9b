//! Sub-agents through the real binary (issue #14): a root spawning children that run in
//! parallel, limits, bad input, narrowing, forks and the cancellation tree. The mock answers
//! each child from its own script, chosen by a word of the child's task.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod subagents_support;
mod support;

use serde_json::Value;
use subagents_support::*;
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
