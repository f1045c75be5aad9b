//! `web_search`: off by default; `web_search = "live"|"cached"` sends the provider's tool as
//! Codex 0.169 does; the provider's `web_search_call` items are kept and sent back; a chat or
//! anthropic provider with web search on is a clear config error.

use serde_json::{json, Value};
use troupe_mock_model::{events, MockResponse};
use troupe_test_support::{stderr, Harness};

fn web_search_tools(body: &Value) -> Vec<Value> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["type"] == "web_search")
        .cloned()
        .collect()
}

#[test]
fn the_tool_is_sent_only_when_asked_for_as_codex_sends_it() {
    let h = Harness::new(vec![
        MockResponse::text("a"),
        MockResponse::text("b"),
        MockResponse::text("c"),
        MockResponse::text("d"),
    ]);
    assert!(h.exec(&["hi"]).status.success());
    assert!(h
        .exec(&["-c", "web_search=\"live\"", "hi"])
        .status
        .success());
    let cached = ["-c", "web_search=\"cached\""];
    let out = h
        .command()
        .args(["exec", "--skip-git-repo-check", "-s", "read-only"])
        .args([cached[0], cached[1], "hi"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Under danger-full-access, Codex sends cached as live.
    assert!(h.exec(&[cached[0], cached[1], "hi"]).status.success());
    let requests = h.mock.requests();
    assert!(web_search_tools(&requests[0].body).is_empty());
    let tool = |live: bool| {
        json!({"type": "web_search", "external_web_access": live,
               "search_content_types": ["text", "image"]})
    };
    assert_eq!(web_search_tools(&requests[1].body), vec![tool(true)]);
    assert_eq!(web_search_tools(&requests[2].body), vec![tool(false)]);
    assert_eq!(web_search_tools(&requests[3].body), vec![tool(true)]);
}

#[test]
fn the_providers_searches_are_kept_and_sent_back() {
    let search = json!({
        "type": "web_search_call", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "rust ractor"}
    });
    let h = Harness::new(vec![
        MockResponse::sse(vec![
            events::created("resp_1"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": search}),
            events::with_output_index(
                events::function_call_done(
                    "c1",
                    "shell",
                    &json!({"command": ["true"]}).to_string(),
                ),
                1,
            ),
            events::completed("resp_1", 10, 0, 5, 0),
        ]),
        MockResponse::text("found it"),
    ]);
    let out = h.exec(&["-c", "web_search=\"live\"", "search"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let input = h.mock.requests()[1].body["input"].clone();
    assert!(
        input.as_array().unwrap().contains(&search),
        "web_search_call not sent back: {input}"
    );
}

#[test]
fn a_provider_without_web_search_is_refused_at_start() {
    for wire in ["chat", "anthropic"] {
        let h = Harness::with_config(vec![], &format!("wire_api = \"{wire}\""));
        let out = h.exec(&["-c", "web_search=\"live\"", "hi"]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains("web_search"), "{err}");
        assert!(err.contains(&format!("speaks the {wire} wire")), "{err}");
        assert!(h.mock.requests().is_empty());
    }
    let h = Harness::new(vec![]);
    let out = h.exec(&["-c", "web_search=\"sometimes\"", "hi"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("web_search"), "{}", stderr(&out));
}
