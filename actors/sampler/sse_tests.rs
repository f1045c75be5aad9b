use super::retry::{backoff, parse_retry_after, retryable_status};
use super::sse::{decode_event, StreamEvent};
use std::time::Duration;
use troupe_messages::errors::ModelError;
use troupe_messages::items::ResponseItem;

#[test]
fn deltas_items_and_completion_decode() {
    assert_eq!(
        decode_event(r#"{"type":"response.output_text.delta","delta":"hé"}"#).unwrap(),
        StreamEvent::TextDelta("hé".into())
    );
    let done = decode_event(
        r#"{"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"c1","name":"shell","arguments":"{}","status":"completed"}}"#,
    )
    .unwrap();
    assert!(
        matches!(done, StreamEvent::ItemDone(ResponseItem::FunctionCall { ref call_id, .. }) if call_id == "c1")
    );
    let StreamEvent::Completed(usage) = decode_event(
        r#"{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":13}}}"#,
    )
    .unwrap() else {
        panic!("not completed")
    };
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens,
            usage.reasoning_output_tokens,
            usage.total_tokens
        ),
        (10, 4, 3, 1, 13)
    );
    assert_eq!(
        decode_event(r#"{"type":"response.created","response":{}}"#).unwrap(),
        StreamEvent::Ignored
    );
}

#[test]
fn garbage_is_a_bad_event_not_a_panic() {
    assert!(decode_event("{not json").is_err());
    assert!(decode_event(r#"{"no":"type"}"#).is_err());
    assert!(decode_event(r#"{"type":"response.output_text.delta"}"#).is_err());
    assert!(
        decode_event(r#"{"type":"response.output_item.done","item":{"type":"mystery"}}"#).is_err()
    );
}

#[test]
fn failures_are_classified() {
    let StreamEvent::Failed { error, retryable } = decode_event(
        r#"{"type":"response.failed","response":{"error":{"code":"context_length_exceeded","message":"too long"}}}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert!(!retryable);
    assert!(matches!(error, ModelError::ContextWindowExceeded { .. }));
    let StreamEvent::Failed { retryable, .. } = decode_event(
        r#"{"type":"response.failed","response":{"error":{"code":"server_error","message":"oops"}}}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert!(retryable);
}

#[test]
fn retry_timing() {
    assert_eq!(parse_retry_after(Some("2")), Some(Duration::from_secs(2)));
    assert_eq!(
        parse_retry_after(Some("0.5")),
        Some(Duration::from_millis(500))
    );
    assert_eq!(
        parse_retry_after(Some("9999")),
        Some(Duration::from_secs(60))
    );
    assert_eq!(
        parse_retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")),
        None
    );
    assert_eq!(parse_retry_after(None), None);
    let first = backoff(1);
    assert!(first >= Duration::from_millis(180) && first <= Duration::from_millis(220));
    assert!(backoff(30) <= Duration::from_millis(11_000));
    assert!(
        retryable_status(429)
            && retryable_status(503)
            && !retryable_status(400)
            && !retryable_status(401)
    );
}
