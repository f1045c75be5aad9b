use super::*;
use pretty_assertions::assert_eq;

#[test]
fn split_text_respects_char_boundaries() {
    let parts = split_text("héllo wörld", 4);
    assert_eq!(parts.len(), 4);
    assert_eq!(parts.concat(), "héllo wörld");
    assert_eq!(split_text("ab", 5), vec!["a".to_owned(), "b".to_owned()]);
    assert!(split_text("", 3).is_empty());
}

#[test]
fn encode_event_uses_type_as_event_name() {
    let ev = events::created("resp_1");
    assert_eq!(
        encode_event(&ev),
        format!("event: response.created\ndata: {ev}\n\n")
    );
    assert_eq!(encode_event(&json!({"x": 1})), "data: {\"x\":1}\n\n");
}

#[test]
fn text_has_expected_event_sequence() {
    let MockResponse::Sse {
        events,
        chunking,
        end,
    } = MockResponse::text("hello there")
    else {
        panic!("text must be SSE");
    };
    assert_eq!(chunking, Chunking::Whole);
    assert_eq!(end, StreamEnd::Complete);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        kinds,
        vec![
            "response.created",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let joined: String = events
        .iter()
        .filter_map(|e| e.get("delta").and_then(Value::as_str))
        .collect();
    assert_eq!(joined, "hello there");
}

#[test]
fn shell_builds_function_call() {
    let MockResponse::Sse { events, .. } = MockResponse::shell("call_9", &["echo", "hi"]) else {
        panic!("shell must be SSE");
    };
    let item = &events[1]["item"];
    assert_eq!(item["name"], "shell");
    assert_eq!(item["call_id"], "call_9");
    let args: Value =
        serde_json::from_str(item["arguments"].as_str().unwrap_or("")).unwrap_or_default();
    assert_eq!(args, json!({"command": ["echo", "hi"]}));
}

#[test]
fn builders_set_fields() {
    let r = MockResponse::text("x").odd_bytes(7).drop_after(2);
    let MockResponse::Sse { chunking, end, .. } = r else {
        panic!("must be SSE");
    };
    assert_eq!(chunking, Chunking::OddBytes(7));
    assert_eq!(end, StreamEnd::DropAfter(2));

    let MockResponse::Http {
        status,
        headers,
        body,
    } = MockResponse::rate_limited(1)
    else {
        panic!("must be HTTP");
    };
    assert_eq!(status, 429);
    assert_eq!(headers, vec![("retry-after".to_owned(), "1".to_owned())]);
    assert!(body.contains("rate_limit_exceeded"));
}
