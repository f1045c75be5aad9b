use crate::jsonrpc::{self, FrameError, Incoming};
use serde_json::{json, Value};

#[test]
fn a_request_with_or_without_jsonrpc_parses() {
    for line in [
        r#"{"id":1,"method":"thread/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"thread/list","params":{}}"#,
    ] {
        assert_eq!(
            jsonrpc::parse(line.as_bytes()),
            Ok(Incoming::Request {
                id: json!(1),
                method: "thread/list".into(),
                params: json!({}),
            })
        );
    }
}

#[test]
fn notifications_and_responses_are_told_apart() {
    assert_eq!(
        jsonrpc::parse(br#"{"method":"initialized"}"#),
        Ok(Incoming::Notification {
            method: "initialized".into()
        })
    );
    assert_eq!(
        jsonrpc::parse(br#"{"id":3,"result":{"decision":"accept"}}"#),
        Ok(Incoming::Response {
            id: json!(3),
            result: Ok(json!({"decision": "accept"})),
        })
    );
    assert_eq!(
        jsonrpc::parse(br#"{"id":3,"error":{"code":1,"message":"no"}}"#),
        Ok(Incoming::Response {
            id: json!(3),
            result: Err(json!({"code": 1, "message": "no"})),
        })
    );
}

#[test]
fn bad_frames_say_why() {
    assert!(matches!(
        jsonrpc::parse(b"not json"),
        Err(FrameError::NotJson(_))
    ));
    assert!(matches!(
        jsonrpc::parse(b"[1,2]"),
        Err(FrameError::Invalid {
            id: Value::Null,
            ..
        })
    ));
    assert!(matches!(
        jsonrpc::parse(br#"{"id":{"x":1},"method":"a"}"#),
        Err(FrameError::Invalid {
            id: Value::Null,
            ..
        })
    ));
    assert!(matches!(
        jsonrpc::parse(br#"{"id":4}"#),
        Err(FrameError::Invalid { .. })
    ));
}

#[test]
fn written_messages_have_codex_shapes() {
    let error: Value =
        serde_json::from_str(&jsonrpc::error(&json!(5), "Not initialized")).unwrap_or_default();
    assert_eq!(
        error,
        json!({"id": 5, "error": {"code": -32600, "message": "Not initialized"}})
    );
    let note: Value = serde_json::from_str(&jsonrpc::notification("turn/started", json!({"a": 1})))
        .unwrap_or_default();
    assert_eq!(note["method"], "turn/started");
    assert!(note["emittedAtMs"].as_i64().is_some_and(|ms| ms > 0));
    assert!(note.get("jsonrpc").is_none());
    let ask: Value =
        serde_json::from_str(&jsonrpc::server_request(0, "item/x", json!({}))).unwrap_or_default();
    assert_eq!(ask, json!({"id": 0, "method": "item/x", "params": {}}));
}
