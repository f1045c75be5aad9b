//! Providers that misbehave on the Chat and Anthropic wires: tool-call deltas interleaved
//! across calls, an index gap, arguments that never close, `finish_reason: length`, an
//! `overloaded_error` mid-stream, an HTML page instead of a stream. Each is retried or fails
//! with a clear message, and nothing half-received reaches the rollout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support as support;

use serde_json::{json, Value};
use support::{json_lines, stderr, Harness};
use troupe_mock_model::MockResponse;

const CHAT: &str = "wire_api = \"chat\"";

/// A raw Chat Completions stream of `deltas` (each one choice delta), then `finish`, usage
/// and `[DONE]`.
fn chat_stream(deltas: &[Value], finish: &str) -> MockResponse {
    let chunk = |delta: &Value, finish: Option<&str>| {
        let chunk = json!({
            "object": "chat.completion.chunk",
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        format!("data: {chunk}\n\n")
    };
    let mut body: String = deltas.iter().map(|d| chunk(d, None)).collect();
    body.push_str(&chunk(&json!({}), Some(finish)));
    let usage = json!({ "choices": [], "usage": { "prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10 } });
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    MockResponse::raw(body)
}

fn call_start(index: u64, id: &str, name: &str) -> Value {
    json!({ "tool_calls": [{ "index": index, "id": id, "type": "function",
        "function": { "name": name, "arguments": "" } }] })
}

fn call_args(index: u64, piece: &str) -> Value {
    json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] })
}

fn errors(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "error")
        .map(|l| l["message"].as_str().unwrap().to_string())
        .collect()
}

/// The history lines of the rollout (errors, which may name what failed, are left out).
fn rollout_text(h: &Harness) -> String {
    h.rollouts()
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| l.contains("\"type\":\"response_item\""))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn tool_messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let output: Value = serde_json::from_str(m["content"].as_str().unwrap()).unwrap();
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                output["output"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn interleaved_argument_deltas_of_parallel_calls_are_assembled_by_index() {
    let h = Harness::with_config(
        vec![
            chat_stream(
                &[
                    call_start(0, "call_x", "shell"),
                    call_args(0, "{\"command\": [\"ec"),
                    call_start(1, "call_y", "shell"),
                    call_args(1, "{\"command\": [\"echo\", "),
                    call_args(0, "ho\", \"first\"]}"),
                    call_args(1, "\"second\"]}"),
                ],
                "tool_calls",
            ),
            MockResponse::text("both ran"),
        ],
        CHAT,
    );
    let out = h.exec(&["--json", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = h.mock.requests();
    assert_eq!(
        tool_messages(&requests[1].body),
        vec![
            ("call_x".to_string(), "first\n".to_string()),
            ("call_y".to_string(), "second\n".to_string())
        ]
    );
    // The calls went back as one assistant message, as the API requires.
    let assistant: Vec<&Value> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(assistant.len(), 1);
    assert_eq!(assistant[0]["tool_calls"].as_array().unwrap().len(), 2);
}

#[test]
fn an_index_gap_is_retried_and_nothing_of_it_is_recorded() {
    let gap = chat_stream(
        &[
            call_start(0, "call_gap0", "shell"),
            call_args(0, "{\"command\": [\"true\"]}"),
            call_start(2, "call_gap2", "shell"),
            call_args(2, "{\"command\": [\"true\"]}"),
        ],
        "tool_calls",
    );
    let h = Harness::with_config(vec![gap, MockResponse::text("clean answer")], CHAT);
    let out = h.exec(&["--json", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let errors = errors(&json_lines(&out));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("skipped index 1"), "{errors:?}");
    assert!(!rollout_text(&h).contains("call_gap"));
}

#[test]
fn arguments_that_never_close_are_retried_then_fail_clearly() {
    let cut = || {
        chat_stream(
            &[
                call_start(0, "call_cut", "shell"),
                call_args(0, "{\"command\": [\"echo\", \"unfinis"),
            ],
            "tool_calls",
        )
    };
    let h = Harness::with_config(vec![cut(), cut(), cut()], CHAT);
    let out = h.exec(&["go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("gave up after 3 attempts")
            && err.contains("arguments of tool call `call_cut` (shell) never closed"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!rollout_text(&h).contains("call_cut"));
}

#[test]
fn finish_reason_length_fails_at_once_and_keeps_what_arrived() {
    let h = Harness::with_config(
        vec![chat_stream(
            &[json!({ "content": "half an ans" })],
            "length",
        )],
        CHAT,
    );
    let out = h.exec(&["go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("finish_reason: length"), "{err}");
    assert_eq!(h.mock.request_count(), 1, "not retried");
    // The output-token limit cut the answer: what the model said is kept, once.
    assert_eq!(rollout_text(&h).matches("half an ans").count(), 1);
}

#[test]
fn an_html_page_instead_of_a_stream_fails_with_a_clear_message() {
    let page = "<!doctype html><html><head><title>Sign in to the proxy</title></head><body>…</body></html>";
    for wire in ["chat", "anthropic", "responses"] {
        let h = Harness::with_config(
            vec![MockResponse::http(200, page).with_header("content-type", "text/html")],
            &format!("wire_api = \"{wire}\""),
        );
        let out = h.exec(&["go"]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(
            err.contains("answered `text/html` instead of an event stream")
                && err.contains("an HTML page titled \"Sign in to the proxy\""),
            "{wire}: {err}"
        );
        assert!(!err.contains("<body>"), "{err}");
    }
    // Behind an error status, the page is named by its title too, and retried.
    let h = Harness::with_config(
        vec![
            MockResponse::http(502, page).with_header("content-type", "text/html"),
            MockResponse::text("through"),
        ],
        CHAT,
    );
    let out = h.exec(&["--json", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let errors = errors(&json_lines(&out));
    assert!(
        errors[0].contains("HTTP 502: an HTML page titled \"Sign in to the proxy\""),
        "{errors:?}"
    );
}

/// A raw Anthropic event stream.
fn anthropic_stream(events: &[Value]) -> MockResponse {
    MockResponse::raw(
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect::<String>(),
    )
}

#[test]
fn anthropic_overloaded_mid_stream_and_529_are_retried() {
    let overloaded = anthropic_stream(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lost words"}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let busy = MockResponse::http(
        529,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            .to_string(),
    );
    let h = Harness::with_config(
        vec![overloaded, busy, MockResponse::text("calm again")],
        "wire_api = \"anthropic\"",
    );
    let out = h.exec(&[
        "--json",
        "-c",
        "model_providers.mock.request_max_retries=3",
        "-c",
        "model_providers.mock.stream_max_retries=3",
        "go",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let errors = errors(&json_lines(&out));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("overloaded_error"), "{errors:?}");
    assert!(errors[1].contains("HTTP 529"), "{errors:?}");
    assert!(!rollout_text(&h).contains("lost words"));
    let request = &h.mock.requests()[0];
    assert_eq!(request.header("x-api-key"), Some("test-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert!(request.header("authorization").is_none());
    assert_eq!(
        request.body["system"][0]["cache_control"]["type"],
        "ephemeral"
    );
}
