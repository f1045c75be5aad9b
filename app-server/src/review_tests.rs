use super::*;
use serde_json::json;

#[test]
fn the_answer_to_the_review_request_names_the_thread() {
    let id = json!(7);
    let line: Line = jsonrpc::response(
        &id,
        json!({"turn": {"id": "t1", "items": [], "status": "inProgress"}}),
    );
    let rewritten = review_response(&line, &id, "thread-1").expect("rewritten");
    let value: Value = serde_json::from_str(&rewritten).unwrap();
    assert_eq!(value["result"]["reviewThreadId"], json!("thread-1"));
    assert_eq!(value["result"]["turn"]["id"], json!("t1"));
    // Other requests' answers, notifications and errors pass unchanged.
    let other = jsonrpc::response(&json!(8), json!({"turn": {}}));
    assert!(review_response(&other, &id, "thread-1").is_none());
    let failed = jsonrpc::error(&id, "a turn is already running");
    assert!(review_response(&failed, &id, "thread-1").is_none());
    let note = jsonrpc::notification("turn/started", json!({"threadId": "thread-1"}));
    assert!(review_response(&note, &id, "thread-1").is_none());
}

#[test]
fn targets_parse_in_codex_shapes() {
    let parse = |v: Value| serde_json::from_value::<ReviewStartParams>(v);
    let params =
        parse(json!({"threadId": "x", "target": {"type": "commit", "sha": "abc", "title": null}}))
            .expect("commit target");
    assert_eq!(
        ReviewTarget::from(params.target),
        ReviewTarget::Commit {
            sha: "abc".into(),
            title: None
        }
    );
    let params = parse(json!({"threadId": "x", "target": {"type": "baseBranch", "branch": "main"}, "delivery": "inline"}))
        .expect("base branch target");
    assert_eq!(params.delivery.as_deref(), Some("inline"));
    assert!(parse(json!({"threadId": "x", "target": {"type": "baseBranch"}})).is_err());
    assert!(parse(json!({"threadId": "x", "target": {"type": "everything"}})).is_err());
}
