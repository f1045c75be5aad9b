#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::{json, Value};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn reply(verdict: Verdict) -> Value {
    match verdict {
        Verdict::Reply(line) => serde_json::from_str(&line).unwrap(),
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn ready() -> LineFilter {
    let mut filter = LineFilter::default();
    assert!(matches!(
        filter.check(INITIALIZE.as_bytes()),
        Verdict::Forward(_)
    ));
    assert!(matches!(
        filter.check(INITIALIZED.as_bytes()),
        Verdict::Forward(_)
    ));
    filter
}

#[test]
fn garbage_is_a_parse_error_with_a_null_id() {
    let mut filter = ready();
    let answer = reply(filter.check(b"garbage"));
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], json!(PARSE_ERROR));
    assert_eq!(answer["jsonrpc"], json!("2.0"));
}

#[test]
fn json_that_is_not_a_message_is_an_invalid_request() {
    let mut filter = ready();
    for line in [
        "[]",
        "{}",
        "5",
        r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
    ] {
        let answer = reply(filter.check(line.as_bytes()));
        assert_eq!(answer["error"]["code"], json!(INVALID_REQUEST), "{line}");
        assert_eq!(answer["id"], Value::Null, "{line}");
    }
    let answer = reply(filter.check(br#"{"id":7,"method":"ping"}"#));
    assert_eq!(answer["id"], json!(7));
    assert_eq!(answer["error"]["code"], json!(INVALID_REQUEST));
}

#[test]
fn requests_before_the_handshake_are_not_initialized_errors() {
    let mut filter = LineFilter::default();
    let answer = reply(filter.check(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#));
    assert_eq!(answer["id"], json!("a"));
    assert_eq!(answer["error"]["message"], json!("Not initialized"));
    assert!(matches!(
        filter.check(INITIALIZED.as_bytes()),
        Verdict::Ignore
    ));
    assert!(matches!(
        filter.check(INITIALIZE.as_bytes()),
        Verdict::Forward(_)
    ));
    // Between `initialize` and `initialized` too.
    let answer = reply(filter.check(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#));
    assert_eq!(answer["error"]["message"], json!("Not initialized"));
    assert!(matches!(
        filter.check(INITIALIZED.as_bytes()),
        Verdict::Forward(_)
    ));
    assert!(matches!(
        filter.check(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#),
        Verdict::Forward(_)
    ));
}

#[test]
fn bad_params_are_answered_and_blank_lines_ignored() {
    let mut filter = ready();
    let answer =
        reply(filter.check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":5}"#));
    assert_eq!(answer["id"], json!(4));
    assert_eq!(answer["error"]["code"], json!(INVALID_PARAMS));
    assert!(matches!(filter.check(b"  \r"), Verdict::Ignore));
    assert!(matches!(
        filter.check(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
        Verdict::Ignore
    ));
}
