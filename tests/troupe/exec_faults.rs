//! A misbehaving model: retries with backoff and Retry-After, exhausted retries, idle streams,
//! dropped streams, garbage events, fatal provider errors, bad tool calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use troupe_mock_model::{events, MockResponse};
use troupe_test_support::{json_lines, stderr, stdout, tool_outputs, Harness};

fn error_messages(lines: &[serde_json::Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "error")
        .map(|l| l["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn rate_limit_then_server_error_then_success() {
    let h = Harness::new(vec![
        MockResponse::rate_limited(0),
        MockResponse::server_error(),
        MockResponse::text("recovered"),
    ]);
    let out = h.exec(&["--json", "x"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let lines = json_lines(&out);
    let errors = error_messages(&lines);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with("Reconnecting... 1/2 (HTTP 429"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("Reconnecting... 2/2 (HTTP 500"),
        "{errors:?}"
    );
    assert_eq!(lines.last().unwrap()["type"], "turn.completed");
    assert_eq!(h.mock.request_count(), 3);
}

#[test]
fn retry_after_header_is_honoured() {
    let h = Harness::new(vec![
        MockResponse::rate_limited(1),
        MockResponse::text("late"),
    ]);
    let started = std::time::Instant::now();
    let out = h.exec(&["x"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    // Not a speed assertion: the client must not have come back before the server allowed.
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    assert!(
        stderr(&out).contains("reconnecting 1/2 in 1000ms"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn exhausted_retries_fail_clearly() {
    let h = Harness::new(vec![
        MockResponse::server_error(),
        MockResponse::server_error(),
        MockResponse::server_error(),
    ]);
    let out = h.exec(&["--json", "x"]);
    assert!(!out.status.success());
    let lines = json_lines(&out);
    let failed = lines.last().unwrap();
    assert_eq!(failed["type"], "turn.failed");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("gave up after 3 attempts; last error: HTTP 500"),
        "{message}"
    );
    assert_eq!(h.mock.request_count(), 3);
}

#[test]
fn dropped_stream_is_retried() {
    let h = Harness::new(vec![
        MockResponse::text("never finished").drop_after(2),
        MockResponse::text("second try"),
    ]);
    let out = h.exec(&["--json", "x"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let errors = error_messages(&json_lines(&out));
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("stream"), "{errors:?}");
    let agent: Vec<serde_json::Value> = json_lines(&out)
        .into_iter()
        .filter(|l| l["item"]["type"] == "agent_message")
        .collect();
    assert_eq!(
        agent.len(),
        1,
        "the dropped attempt's text must not be recorded"
    );
    assert_eq!(agent[0]["item"]["text"], "second try");
}

#[test]
fn idle_stream_times_out_then_retries() {
    let h = Harness::with_config(
        vec![
            MockResponse::text("stalls").stall_after(1),
            MockResponse::text("fresh"),
        ],
        "",
    );
    let out = h.exec(&["-c", "model_providers.mock.stream_idle_timeout_ms=300", "x"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("idle timeout"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "fresh\n");
}

#[test]
fn idle_stream_without_retries_fails() {
    let h = Harness::new(vec![MockResponse::text("stalls").stall_after(1)]);
    let out = h.exec(&[
        "-c",
        "model_providers.mock.stream_idle_timeout_ms=300",
        "-c",
        "model_providers.mock.stream_max_retries=0",
        "x",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("idle timeout: no data from the model for 300 ms"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn context_window_and_quota_fail_at_once() {
    for (response, expected) in [
        (MockResponse::context_length_exceeded(), "context window"),
        (MockResponse::insufficient_quota(), "quota exceeded"),
    ] {
        let h = Harness::new(vec![response]);
        let out = h.exec(&["x"]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
        assert_eq!(h.mock.request_count(), 1, "must not retry");
    }
}

#[test]
fn garbage_events_are_skipped() {
    let mut body = String::from("event: response.created\ndata: {not json\n\n");
    body.push_str(
        "data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"mystery\"}}\n\n",
    );
    for event in [
        events::assistant_message_done("m1", "survived garbage"),
        events::completed("r1", 1, 0, 1, 0),
    ] {
        body.push_str(&format!("data: {event}\n\n"));
    }
    let h = Harness::new(vec![MockResponse::raw(body)]);
    let out = h.exec(&["x"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "survived garbage\n");
}

#[test]
fn invalid_arguments_and_unknown_tools_go_back_to_the_model() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            ("a", "shell", "{\"command\": \"ls\"}".to_string()),
            ("b", "shell", "{broken".to_string()),
            ("c", "no_such_tool", "{}".to_string()),
        ]),
        MockResponse::text("noted"),
    ]);
    let out = h.exec(&["x"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let outputs = tool_outputs(&h.mock.requests()[1].body);
    assert_eq!(outputs.len(), 3);
    assert!(
        outputs[0].starts_with("invalid arguments for shell: invalid type"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[1].starts_with("invalid arguments for shell"),
        "{}",
        outputs[1]
    );
    assert!(
        outputs[2].contains("no tool named `no_such_tool`"),
        "{}",
        outputs[2]
    );
    assert_eq!(stdout(&out), "noted\n");
}

#[test]
fn missing_program_is_an_error_output_not_a_crash() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![(
            "a",
            "shell",
            json!({"command": ["/no/such/bin"]}).to_string(),
        )]),
        MockResponse::text("ok"),
    ]);
    let out = h.exec(&["x"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let outputs = tool_outputs(&h.mock.requests()[1].body);
    assert!(
        outputs[0].starts_with("execution error: failed to start `/no/such/bin`"),
        "{}",
        outputs[0]
    );
}
