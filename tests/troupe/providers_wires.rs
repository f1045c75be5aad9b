//! The same scripted conversation over every wire (Responses SSE, Responses over WebSocket,
//! Chat Completions, Anthropic Messages): parallel tool calls, apply_patch, a 429 then success, a dropped stream. Each
//! gives the same rollout items (modulo ids) and the same tool results; a thread that moves
//! to another wire mid-way resumes with its whole history.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support as support;

use serde_json::{json, Value};
use support::{json_lines, stderr, Harness};
use troupe_mock_model::{events, Behaviour, MockModel, MockOptions, MockResponse};

const PATCH: &str = "*** Begin Patch\n*** Add File: made.txt\n+made by the model\n*** End Patch";

fn custom_call(call_id: &str, name: &str, input: &str) -> MockResponse {
    MockResponse::sse(vec![
        events::created("resp_custom"),
        events::custom_tool_call_done(call_id, name, input),
        events::completed("resp_custom", 10, 0, 5, 0),
    ])
}

fn conversation() -> Vec<MockResponse> {
    let shell = |word: &str| json!({ "command": ["echo", word] }).to_string();
    vec![
        MockResponse::rate_limited(0),
        MockResponse::tool_calls(vec![
            ("call_a", "shell", shell("alpha")),
            ("call_b", "shell", shell("beta")),
        ]),
        custom_call("call_p", "apply_patch", PATCH),
        MockResponse::text("all done").drop_after(3),
        MockResponse::text("all done"),
    ]
}

/// Drops what legitimately differs between runs: item ids and command durations.
fn normalize(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            map.remove("id");
            map.remove("duration_seconds");
            for (key, inner) in map.iter_mut() {
                if key == "output" {
                    if let Some(parsed) = inner.as_str().and_then(|t| serde_json::from_str(t).ok())
                    {
                        *inner = normalize(parsed);
                        continue;
                    }
                }
                *inner = normalize(inner.take());
            }
        }
        Value::Array(items) => {
            for inner in items.iter_mut() {
                *inner = normalize(inner.take());
            }
        }
        _ => {}
    }
    value
}

/// The `response_item` payloads of the thread's rollout, normalized (the work dir, a
/// temporary directory, named alike).
fn rollout_items(h: &Harness) -> Vec<Value> {
    let rollouts = h.rollouts();
    assert_eq!(rollouts.len(), 1, "{rollouts:?}");
    let workdir = h.workdir.path().to_str().unwrap().to_string();
    std::fs::read_to_string(&rollouts[0])
        .unwrap()
        .replace(&workdir, "/WORKDIR")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["type"] == "response_item")
        .map(|line| normalize(line["payload"].clone()))
        .collect()
}

fn run_on(wire: &str) -> (Harness, Vec<Value>) {
    let config = match wire {
        "websocket" => "wire_api = \"responses\"\nsupports_websockets = true".to_string(),
        _ => format!("wire_api = \"{wire}\""),
    };
    let h = Harness::with_config(conversation(), &config);
    let out = h.exec(&["--json", "make the file"]);
    assert!(out.status.success(), "{wire}: {}", stderr(&out));
    let lines = json_lines(&out);
    let retries = lines.iter().filter(|l| l["type"] == "error").count();
    assert_eq!(retries, 2, "{wire}: a 429 and a dropped stream: {lines:#?}");
    assert_eq!(
        std::fs::read_to_string(h.workdir.path().join("made.txt")).unwrap(),
        "made by the model\n",
        "{wire}"
    );
    let items = rollout_items(&h);
    (h, items)
}

fn request_paths(h: &Harness) -> Vec<String> {
    h.mock.requests().into_iter().map(|r| r.path).collect()
}

#[test]
fn one_conversation_gives_the_same_rollout_items_on_every_wire() {
    let (responses_h, responses) = run_on("responses");
    let (chat_h, chat) = run_on("chat");
    let (anthropic_h, anthropic) = run_on("anthropic");
    let (websocket_h, websocket) = run_on("websocket");
    assert!(request_paths(&responses_h)
        .iter()
        .all(|p| p == "/v1/responses"));
    assert!(request_paths(&chat_h)
        .iter()
        .all(|p| p == "/v1/chat/completions"));
    assert!(request_paths(&anthropic_h)
        .iter()
        .all(|p| p == "/v1/messages"));
    let requests = websocket_h.mock.requests();
    assert!(requests.iter().all(|r| r.method == "WEBSOCKET"));
    // The 429 and the dropped response each cost a new connection; the rest reuse one.
    assert_eq!(requests.len(), 5);
    assert_eq!(websocket_h.mock.websocket_connections(), 3);
    // The model's part: two parallel calls, one freeform call, the answer; and the tools'.
    let kinds: Vec<&str> = responses
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    let tail = &kinds[kinds.len() - 7..];
    assert_eq!(
        tail,
        [
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "custom_tool_call",
            "custom_tool_call_output",
            "message"
        ]
    );
    pretty_assertions::assert_eq!(responses, chat);
    pretty_assertions::assert_eq!(responses, anthropic);
    pretty_assertions::assert_eq!(responses, websocket);
}

#[test]
fn a_turn_reuses_one_websocket_and_falls_back_to_sse_when_the_upgrade_fails() {
    let steps = || {
        let shell = |word: &str| json!({ "command": ["echo", word] }).to_string();
        vec![
            MockResponse::tool_calls(vec![("call_1", "shell", shell("one"))]),
            MockResponse::tool_calls(vec![("call_2", "shell", shell("two"))]),
            MockResponse::tool_calls(vec![("call_3", "shell", shell("three"))]),
            MockResponse::text("three steps"),
        ]
    };
    let h = Harness::with_config(steps(), "supports_websockets = true");
    let out = h.exec(&["steps"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(h.mock.request_count(), 4);
    assert_eq!(
        h.mock.websocket_connections(),
        1,
        "one connection for the turn"
    );
    let first = &h.mock.requests()[0];
    assert_eq!(
        first.header("openai-beta"),
        Some("responses_websockets=2026-02-06")
    );
    assert_eq!(first.header("authorization"), Some("Bearer test-key"));
    assert_eq!(first.body["type"], "response.create");

    // A server without WebSockets: the upgrade fails, the turn goes on over SSE.
    let mock = MockModel::start_blocking(MockOptions {
        websockets: false,
        ..MockOptions::new(Behaviour::Script(steps()))
    })
    .unwrap();
    let out = h.exec(&[
        "-c",
        &format!("model_providers.mock.base_url=\"{}\"", mock.base_url()),
        "steps",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let methods: Vec<String> = mock.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(
        methods,
        ["GET", "POST", "POST", "POST", "POST"],
        "one failed upgrade"
    );
    assert_eq!(mock.websocket_connections(), 0);
}

/// The history of the last request, as the wire sent it.
fn last_body(h: &Harness) -> Value {
    h.mock.requests().last().unwrap().body.clone()
}

#[test]
fn a_thread_moves_from_chat_to_anthropic_to_responses_to_websocket_and_keeps_its_history() {
    let mut script = conversation();
    script.push(MockResponse::text("anthropic answers"));
    script.push(MockResponse::text("responses answers"));
    script.push(MockResponse::text("websocket answers"));
    let h = Harness::with_config(script, "wire_api = \"chat\"");
    let out = h.exec(&["--json", "make the file"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let thread = json_lines(&out)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();

    let resume = |wire: &str, prompt: &str| {
        let wire = format!("model_providers.mock.wire_api=\"{wire}\"");
        let out = h.exec(&["--json", "-c", &wire, "resume", &thread, prompt]);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    resume("anthropic", "and now?");
    let body = last_body(&h);
    assert_eq!(h.mock.requests().last().unwrap().path, "/v1/messages");
    let messages = body["messages"].as_array().unwrap();
    let blocks: Vec<(String, String)> = messages
        .iter()
        .flat_map(|m| {
            let role = m["role"].as_str().unwrap().to_string();
            m["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |b| (role.clone(), b["type"].as_str().unwrap().to_string()))
        })
        .filter(|(_, kind)| kind != "text")
        .collect();
    let pair = |role: &str, kind: &str| (role.to_string(), kind.to_string());
    assert_eq!(
        blocks,
        vec![
            pair("assistant", "tool_use"),
            pair("assistant", "tool_use"),
            pair("user", "tool_result"),
            pair("user", "tool_result"),
            pair("assistant", "tool_use"),
            pair("user", "tool_result"),
        ]
    );
    let patch_call = messages
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .find(|b| b["id"] == "call_p")
        .unwrap();
    assert_eq!(patch_call["input"]["input"], PATCH);
    // Strict alternation, as the API requires.
    for pair in messages.windows(2) {
        assert_ne!(pair[0]["role"], pair[1]["role"], "{messages:#?}");
    }

    resume("responses", "and finally?");
    let body = last_body(&h);
    let input = body["input"].as_array().unwrap();
    let calls: Vec<&str> = input.iter().filter_map(|i| i["call_id"].as_str()).collect();
    assert_eq!(
        calls,
        ["call_a", "call_b", "call_a", "call_b", "call_p", "call_p"]
    );
    let answers: Vec<&str> = input
        .iter()
        .filter(|i| i["role"] == "assistant")
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["all done", "anthropic answers"]);

    // And on to Responses over WebSocket: the same history, as one `response.create`.
    let out = h.exec(&[
        "--json",
        "-c",
        "model_providers.mock.wire_api=\"responses\"",
        "-c",
        "model_providers.mock.supports_websockets=true",
        "resume",
        &thread,
        "over a socket?",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let last = h.mock.requests().last().unwrap().clone();
    assert_eq!(last.method, "WEBSOCKET");
    assert_eq!(last.body["type"], "response.create");
    let input = last.body["input"].as_array().unwrap();
    let calls: Vec<&str> = input.iter().filter_map(|i| i["call_id"].as_str()).collect();
    assert_eq!(
        calls,
        ["call_a", "call_b", "call_a", "call_b", "call_p", "call_p"]
    );
    let answers: Vec<&str> = input
        .iter()
        .filter(|i| i["role"] == "assistant")
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        answers,
        ["all done", "anthropic answers", "responses answers"]
    );
}
