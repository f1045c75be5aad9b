//! `troupe exec` end to end against the mock model: the tool loop, parallel calls, the
//! rollout, JSONL output, prompts from stdin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use troupe_mock_model::{events, MockResponse};
use troupe_test_support::{json_lines, stderr, stdout, tool_outputs, Harness};

#[test]
fn three_tool_calls_then_final_message() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["sh", "-c", "echo one"]),
        MockResponse::shell("c2", &["sh", "-c", "echo two >&2; exit 3"]),
        MockResponse::shell("c3", &["pwd"]),
        MockResponse::text("all three done"),
    ]);
    let out = h.exec(&["run three commands"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "all three done\n");

    let requests = h.mock.requests();
    assert_eq!(requests.len(), 4);
    let last = &requests[3].body;
    let outputs = tool_outputs(last);
    assert_eq!(outputs.len(), 3);
    let first: serde_json::Value = serde_json::from_str(&outputs[0]).unwrap();
    assert_eq!(first["output"], "one\n");
    assert_eq!(first["metadata"]["exit_code"], 0);
    let second: serde_json::Value = serde_json::from_str(&outputs[1]).unwrap();
    assert_eq!(second["metadata"]["exit_code"], 3);
    assert_eq!(second["output"], "two\n");
    let third: serde_json::Value = serde_json::from_str(&outputs[2]).unwrap();
    let workdir = std::fs::canonicalize(h.workdir.path()).unwrap();
    assert_eq!(third["output"], format!("{}\n", workdir.display()));
    // Request shape: streamed Responses API with the shell tool and the key.
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(requests[0].body["model"], "mock-model");
    assert!(requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "shell"));
    assert_eq!(requests[0].header("authorization"), Some("Bearer test-key"));
    // History grows append-only: each request's input starts with the previous one's.
    for pair in requests.windows(2) {
        let before = pair[0].body["input"].as_array().unwrap();
        let after = pair[1].body["input"].as_array().unwrap();
        assert_eq!(&after[..before.len()], &before[..]);
    }

    // The rollout holds every item in order.
    let rollouts = h.rollouts();
    assert_eq!(rollouts.len(), 1);
    let text = std::fs::read_to_string(&rollouts[0]).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session_meta");
    let all_items: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["type"] == "response_item")
        .map(|l| &l["payload"])
        .collect();
    // The initial context (permissions, environment) comes first, then the turn.
    assert_eq!(all_items[0]["role"], "developer");
    assert!(all_items[1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("<environment_context>"));
    let items = &all_items[2..];
    let kinds: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "function_call",
            "function_call_output",
            "function_call",
            "function_call_output",
            "function_call",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(items[1]["call_id"], "c1");
    assert_eq!(items[7]["content"][0]["text"], "all three done");
    // What the last request sent is exactly the recorded history before the answer.
    assert_eq!(last["input"].as_array().unwrap().len(), 9);
    for (sent, recorded) in last["input"].as_array().unwrap().iter().zip(&all_items) {
        assert_eq!(&sent, recorded);
    }
}

#[test]
fn json_output_has_codex_shapes() {
    let h = Harness::new(vec![
        MockResponse::sse(vec![
            events::created("r1"),
            events::reasoning_done("rs1", "thinking about it"),
            events::with_output_index(
                events::function_call_done(
                    "c1",
                    "shell",
                    r#"{"command":["sh","-c","echo step-1"]}"#,
                ),
                1,
            ),
            events::completed("r1", 10, 2, 5, 1),
        ]),
        MockResponse::text("done"),
    ]);
    let out = h.exec(&["--json", "go"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let lines = json_lines(&out);
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "item.started",
            "item.completed",
            "item.completed",
            "turn.completed"
        ]
    );
    assert!(lines[0]["thread_id"].as_str().unwrap().len() >= 32);
    assert_eq!(
        lines[2]["item"],
        json!({"id": "item_0", "type": "reasoning", "text": "thinking about it"})
    );
    assert_eq!(
        lines[3]["item"],
        json!({"id": "item_1", "type": "command_execution", "command": "sh -c 'echo step-1'",
               "aggregated_output": "", "exit_code": null, "status": "in_progress"})
    );
    assert_eq!(
        lines[4]["item"],
        json!({"id": "item_1", "type": "command_execution", "command": "sh -c 'echo step-1'",
               "aggregated_output": "step-1\n", "exit_code": 0, "status": "completed"})
    );
    assert_eq!(
        lines[5]["item"],
        json!({"id": "item_2", "type": "agent_message", "text": "done"})
    );
    assert_eq!(lines[6]["usage"]["input_tokens"], 110);
    assert_eq!(lines[6]["usage"]["cached_input_tokens"], 2);
    // "type" comes first on every line, as in Codex's output.
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        assert!(line.starts_with("{\"type\":"), "{line}");
    }
}

#[test]
fn parallel_calls_in_one_response_run_together() {
    // Each command waits for the other's marker file: both succeed only if they overlap.
    let wait_for = |mine: &str, other: &str| {
        format!("touch {mine}; for i in $(seq 200); do [ -f {other} ] && exit 0; sleep 0.02; done; exit 1")
    };
    let args = |script: String| json!({"command": ["sh", "-c", script]}).to_string();
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            ("p1", "shell", args(wait_for("a", "b"))),
            ("p2", "shell", args(wait_for("b", "a"))),
        ]),
        MockResponse::text("both ran"),
    ]);
    let out = h.exec(&["parallel"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = h.mock.requests();
    let input = requests[1].body["input"].as_array().unwrap().clone();
    let outputs: Vec<&serde_json::Value> = input
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .collect();
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[0]["call_id"], "p1");
    assert_eq!(outputs[1]["call_id"], "p2");
    for output in outputs {
        let parsed: serde_json::Value =
            serde_json::from_str(output["output"].as_str().unwrap()).unwrap();
        assert_eq!(parsed["metadata"]["exit_code"], 0, "{parsed}");
    }
    assert_eq!(requests[0].body["parallel_tool_calls"], true);
}

#[test]
fn prompt_from_stdin_and_last_message_file() {
    let h = Harness::new(vec![MockResponse::text("from stdin")]);
    let last = h.workdir.path().join("last.txt");
    let out = h.exec_with_stdin(
        &["--output-last-message", last.to_str().unwrap(), "-"],
        Some("prompt on stdin\n"),
    );
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&last).unwrap(), "from stdin");
    let first = &h.mock.requests()[0].body;
    let input = first["input"].as_array().unwrap();
    assert_eq!(
        input.last().unwrap()["content"][0]["text"],
        "prompt on stdin\n"
    );
    assert!(stderr(&out).contains("provider: mock"));
}

#[test]
fn deltas_split_at_odd_byte_boundaries_reassemble() {
    let text = "héllo wörld — streaming ✓";
    let deltas: Vec<String> = vec![
        "hél".into(),
        "lo wö".into(),
        "rld — stre".into(),
        "aming ✓".into(),
    ];
    let h = Harness::new(vec![
        MockResponse::text_from_deltas(text, &deltas).odd_bytes(3)
    ]);
    let out = h.exec(&["stream"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), format!("{text}\n"));
}

#[test]
fn shell_timeout_is_reported_to_the_model() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![(
            "t1",
            "shell",
            json!({"command": ["sleep", "5"], "timeout_ms": 200}).to_string(),
        )]),
        MockResponse::text("ok"),
    ]);
    let out = h.exec(&["--json", "slow"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let outputs = tool_outputs(&h.mock.requests()[1].body);
    let parsed: serde_json::Value = serde_json::from_str(&outputs[0]).unwrap();
    assert_eq!(parsed["metadata"]["timed_out"], true);
    assert!(parsed["output"]
        .as_str()
        .unwrap()
        .starts_with("command timed out after 200 milliseconds"));
    let lines = json_lines(&out);
    let done = lines
        .iter()
        .find(|l| l["type"] == "item.completed" && l["item"]["type"] == "command_execution")
        .unwrap();
    assert_eq!(done["item"]["status"], "failed");
}
