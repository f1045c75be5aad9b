//! `troupe acp` and what the editor offers (a submodule of `acp.rs`): commands shown in the
//! editor's display-only terminals, never executed by it; sub-agents' patches written
//! through the editor.

use super::{call_updates, patch_call, run_client_env, shell_args, FULL_ACCESS};
use serde_json::{json, Value};
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

fn build_and_read() -> Harness {
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![
            (
                "s1",
                "shell",
                shell_args("echo building; echo built >&2; exit 3"),
            ),
            ("s2", "shell", shell_args("cat notes.txt")),
        ]),
        MockResponse::text("done"),
    ]);
    std::fs::write(harness.workdir.path().join("notes.txt"), "a note\n").unwrap();
    harness
}

/// The data streamed to the terminal of `id`, in order.
fn terminal_data(calls: &[&Value], id: &str) -> String {
    calls
        .iter()
        .filter_map(|u| u["_meta"]["terminal_output"].as_object())
        .inspect(|out| assert_eq!(out["terminal_id"], id))
        .map(|out| out["data"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_command_shows_in_the_editors_display_only_terminal_and_troupe_runs_it() {
    let harness = build_and_read();
    let seen = run_client_env(
        &harness,
        "terminal",
        &FULL_ACCESS,
        &[("ACP_TERMINAL_OUTPUT", "1")],
    );
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    // The editor was never asked to execute anything.
    assert_eq!(seen["terminalRequests"], json!([]), "{seen}");
    let build = call_updates(&seen, "s1");
    let start = build[0];
    assert_eq!(start["sessionUpdate"], "tool_call");
    assert_eq!(start["kind"], "execute");
    assert_eq!(
        start["content"],
        json!([{"type": "terminal", "terminalId": "s1"}])
    );
    let info = &start["_meta"]["terminal_info"];
    assert_eq!(info["terminal_id"], "s1");
    assert_eq!(
        std::fs::canonicalize(info["cwd"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(harness.workdir.path()).unwrap()
    );
    let streamed = terminal_data(&build, "s1");
    assert!(
        streamed.contains("building") && streamed.contains("built"),
        "{streamed:?}"
    );
    let end = build.last().unwrap();
    assert_eq!(end["status"], "failed");
    assert_eq!(
        end["_meta"]["terminal_exit"],
        json!({"terminal_id": "s1", "exit_code": 3, "signal": null})
    );
    assert_eq!(end["rawOutput"]["exitCode"], 3);
    // Only updates that carry content replace it: the terminal stays the call's content.
    assert!(
        build[1..].iter().all(|u| u.get("content").is_none()),
        "{build:?}"
    );
    // A read stays text.
    let read = call_updates(&seen, "s2");
    assert_eq!(read[0]["kind"], "read");
    assert!(read.iter().all(|u| u.get("_meta").is_none()), "{read:?}");
    let text = read.last().unwrap()["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("a note"), "{text}");
    // The model got the output Troupe captured.
    let request = harness.mock.requests().last().unwrap().body.to_string();
    assert!(
        request.contains("building") && request.contains("a note"),
        "{request}"
    );
}

#[test]
fn terminal_methods_alone_are_not_used_and_output_streams_as_text() {
    let harness = build_and_read();
    let seen = run_client_env(&harness, "terminal", &FULL_ACCESS, &[]);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    assert_eq!(seen["terminalRequests"], json!([]), "{seen}");
    let build = call_updates(&seen, "s1");
    assert!(build.iter().all(|u| u.get("_meta").is_none()), "{build:?}");
    let end = build.last().unwrap();
    assert_eq!(end["status"], "failed");
    let text = end["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.contains("building") && text.contains("built"),
        "{text}"
    );
}

#[test]
fn a_sub_agents_patch_goes_through_the_editor() {
    use crate::subagents_support::{spawn_call, wait_call};
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "a1",
            "editor",
            "child-patch-marker: edit the notes",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ]);
    harness.mock.route(
        "child-patch-marker",
        vec![
            patch_call(
                "p1",
                "*** Begin Patch\n*** Update File: notes.txt\n@@\n-buffer line\n+child line\n*** End Patch\n",
            ),
            MockResponse::text("child patched"),
        ],
    );
    let notes = harness.workdir.path().join("notes.txt");
    std::fs::write(&notes, "disk line\n").unwrap();
    let seen = super::run_client(&harness, "fs", &FULL_ACCESS);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    // The child read the editor's unsaved buffer and its write went to the editor.
    let notes_path = notes.to_string_lossy().into_owned();
    assert!(
        seen["reads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == notes_path.as_str()),
        "{seen}"
    );
    assert_eq!(
        seen["writes"],
        json!([{"path": notes_path, "content": "child line\n"}]),
        "{seen}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "disk line\n");
    // The sub-agent's tool call says its patch was applied.
    let log: String = seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["update"])
        .filter(|u| {
            u["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with("agent-"))
        })
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .collect();
    assert!(log.contains("Edit notes.txt (done)"), "{log}");
}
