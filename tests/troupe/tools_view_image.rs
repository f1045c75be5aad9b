//! `view_image` end to end: the image goes back to the model as the call's output in Codex
//! 0.169's form on the Responses wire, as a tool result image on Anthropic, as a user image
//! after the tool messages on Chat; it survives resume; bad paths (missing, not an image,
//! too large, under `sandbox_deny_read`) get a clear error output and nothing attached.

use serde_json::{json, Value};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

/// A PNG signature and a few bytes: enough for the magic-byte check.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\nabc";
const PNG_URL: &str = "data:image/png;base64,iVBORw0KGgphYmM=";

fn view(call_id: &str, path: &str) -> MockResponse {
    MockResponse::tool_calls(vec![(
        call_id,
        "view_image",
        json!({ "path": path }).to_string(),
    )])
}

/// The output item of `call_id` in a Responses request body.
fn output_of(body: &Value, call_id: &str) -> Value {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no output for {call_id} in {body}"))["output"]
        .clone()
}

#[test]
fn the_image_is_the_calls_output_as_codex_sends_it() {
    let h = Harness::new(vec![view("c1", "shot.png"), MockResponse::text("a dot")]);
    std::fs::write(h.workdir.path().join("shot.png"), PNG).unwrap();
    let out = h.exec(&["look at shot.png"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = &h.mock.requests()[0].body;
    let spec = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "view_image")
        .expect("view_image advertised")
        .clone();
    assert_eq!(spec["parameters"]["required"], json!(["path"]));
    assert_eq!(
        output_of(&h.mock.requests()[1].body, "c1"),
        json!([{ "type": "input_image", "image_url": PNG_URL, "detail": "original" }])
    );
}

#[test]
fn a_resumed_thread_sends_the_image_again() {
    let h = Harness::new(vec![
        view("c1", "shot.png"),
        MockResponse::text("a dot"),
        MockResponse::text("still a dot"),
    ]);
    std::fs::write(h.workdir.path().join("shot.png"), PNG).unwrap();
    assert!(h.exec(&["look"]).status.success());
    std::fs::remove_file(h.workdir.path().join("shot.png")).unwrap();
    let out = h.exec(&["resume", "--last", "and again?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        output_of(&h.mock.requests()[2].body, "c1"),
        json!([{ "type": "input_image", "image_url": PNG_URL, "detail": "original" }])
    );
}

#[test]
fn bad_paths_get_a_clear_error_and_nothing_attached() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            (
                "missing",
                "view_image",
                json!({"path": "nope.png"}).to_string(),
            ),
            (
                "text",
                "view_image",
                json!({"path": "notes.png"}).to_string(),
            ),
            ("big", "view_image", json!({"path": "big.png"}).to_string()),
            (
                "secret",
                "view_image",
                json!({"path": "secret/key.png"}).to_string(),
            ),
            ("dir", "view_image", json!({"path": "secret"}).to_string()),
            ("empty", "view_image", json!({"path": ""}).to_string()),
        ]),
        MockResponse::text("ok"),
    ]);
    let dir = h.workdir.path();
    std::fs::write(dir.join("notes.png"), "just text").unwrap();
    let mut big = PNG.to_vec();
    big.resize(11 * 1024 * 1024, 0);
    std::fs::write(dir.join("big.png"), big).unwrap();
    std::fs::create_dir(dir.join("secret")).unwrap();
    std::fs::write(dir.join("secret/key.png"), PNG).unwrap();
    let deny = format!(
        "sandbox_deny_read=[\"{}\"]",
        dir.join("secret").canonicalize().unwrap().display()
    );
    let out = h.exec(&["-c", &deny, "look"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &h.mock.requests()[1].body;
    let text = |id: &str| output_of(body, id).as_str().unwrap_or_default().to_string();
    assert!(
        text("missing").starts_with("unable to locate image at"),
        "{}",
        text("missing")
    );
    assert!(text("missing").contains("nope.png"));
    assert!(
        text("text").contains("invalid or unsupported image data"),
        "{}",
        text("text")
    );
    assert!(
        text("big").contains("the limit is 10485760 bytes"),
        "{}",
        text("big")
    );
    assert!(text("secret").contains("deny-read"), "{}", text("secret"));
    assert!(text("dir").contains("deny-read"), "{}", text("dir"));
    assert!(
        text("empty").contains("`path` is empty"),
        "{}",
        text("empty")
    );
    assert!(!body.to_string().contains("input_image"));
}

#[test]
fn on_the_anthropic_wire_the_image_is_in_the_tool_result() {
    let h = Harness::with_config(
        vec![view("c1", "shot.png"), MockResponse::text("a dot")],
        "wire_api = \"anthropic\"",
    );
    std::fs::write(h.workdir.path().join("shot.png"), PNG).unwrap();
    let out = h.exec(&["look"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = h.mock.requests()[1].body.to_string();
    let result: Value = h.mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result in {body}"));
    assert_eq!(
        result["content"],
        json!([{ "type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgphYmM="
        }}])
    );
}

#[test]
fn on_the_chat_wire_the_image_follows_the_tool_messages() {
    let h = Harness::with_config(
        vec![view("c1", "shot.png"), MockResponse::text("a dot")],
        "wire_api = \"chat\"",
    );
    std::fs::write(h.workdir.path().join("shot.png"), PNG).unwrap();
    let out = h.exec(&["look"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let messages = h.mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let at = messages
        .iter()
        .position(|m| m["role"] == "tool")
        .expect("a tool message");
    assert_eq!(
        messages[at]["content"],
        "1 image(s) attached in the next message"
    );
    assert_eq!(messages[at + 1]["role"], "user");
    assert_eq!(
        messages[at + 1]["content"],
        json!([{ "type": "image_url", "image_url": { "url": PNG_URL } }])
    );
}
