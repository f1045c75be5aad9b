use super::*;
use crate::session::{decision_of, stop_reason};
use troupe_messages::errors::{ModelError, TurnError};
use troupe_messages::events::AbortReason;
use troupe_messages::ops::ReviewDecision;

#[test]
fn lines_are_requests_notifications_or_responses() {
    assert_eq!(
        parse_line(r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#),
        Ok(Incoming::Request {
            id: json!(3),
            method: "initialize".into(),
            params: json!({}),
        })
    );
    assert!(matches!(
        parse_line(r#"{"jsonrpc":"2.0","method":"session/cancel"}"#),
        Ok(Incoming::Notification { .. })
    ));
    assert_eq!(
        parse_line(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"message":"gone"}}"#),
        Ok(Incoming::Response {
            id: json!(0),
            outcome: Err(RpcError::new(RESOURCE_NOT_FOUND, "gone")),
        })
    );
}

#[test]
fn bad_lines_get_their_codes() {
    assert_eq!(parse_line("{nope").unwrap_err().1.code, PARSE_ERROR);
    assert_eq!(parse_line("[1,2]").unwrap_err().1.code, INVALID_REQUEST);
    let (id, error) = parse_line(r#"{"id":7,"method":5}"#).unwrap_err();
    assert_eq!((id, error.code), (json!(7), INVALID_REQUEST));
    assert_eq!(
        parse_line(r#"{"id":{"a":1},"method":"x"}"#)
            .unwrap_err()
            .1
            .code,
        INVALID_REQUEST
    );
}

#[test]
fn permission_answers_become_decisions() {
    let selected = |id: &str| Ok(json!({"outcome": {"outcome": "selected", "optionId": id}}));
    assert_eq!(
        decision_of(&selected("allow_once")),
        ReviewDecision::Approved
    );
    assert_eq!(
        decision_of(&selected("allow_always")),
        ReviewDecision::ApprovedForSession
    );
    assert_eq!(
        decision_of(&selected("reject_once")),
        ReviewDecision::Denied
    );
    assert_eq!(decision_of(&selected("made_up")), ReviewDecision::Denied);
    assert_eq!(
        decision_of(&Ok(json!({"outcome": {"outcome": "cancelled"}}))),
        ReviewDecision::Abort
    );
    assert_eq!(
        decision_of(&Err(RpcError::internal("x"))),
        ReviewDecision::Denied
    );
}

#[test]
fn turn_ends_become_stop_reasons() {
    let reason = |aborted, failure: Option<TurnError>| {
        stop_reason(aborted, failure.as_ref()).map(|v| v["stopReason"].clone())
    };
    assert_eq!(reason(None, None), Ok(json!("end_turn")));
    assert_eq!(
        reason(Some(AbortReason::Interrupted), None),
        Ok(json!("cancelled"))
    );
    let window = TurnError::Model(ModelError::ContextWindowExceeded {
        message: "x".into(),
    });
    assert_eq!(
        reason(Some(AbortReason::Failed), Some(window)),
        Ok(json!("max_tokens"))
    );
    let other = TurnError::Internal {
        message: "boom".into(),
    };
    assert!(reason(Some(AbortReason::Failed), Some(other)).is_err());
}

#[test]
fn client_mcp_servers_become_config_overrides() {
    let servers: Vec<crate::protocol::McpServer> = serde_json::from_value(json!([
        {"name": "my files", "command": "/bin/srv", "args": ["-x"], "env": [{"name": "K", "value": "v\""}]},
        {"type": "http", "name": "web", "url": "https://h/mcp", "headers": []},
    ]))
    .unwrap();
    let overrides = crate::protocol::mcp_overrides(&servers).unwrap();
    assert_eq!(
        overrides[0],
        r#"mcp_servers.my_files={command="/bin/srv",args=["-x"],env={"K"="v\""}}"#
    );
    assert_eq!(
        overrides[1],
        r#"mcp_servers.web={url="https://h/mcp",http_headers={}}"#
    );
    let sse: Vec<crate::protocol::McpServer> =
        serde_json::from_value(json!([{"type": "sse", "name": "s", "url": "u"}])).unwrap();
    assert_eq!(
        crate::protocol::mcp_overrides(&sse).unwrap_err().code,
        INVALID_PARAMS
    );
}

#[tokio::test]
async fn a_client_that_stops_reading_never_blocks_updates() {
    // The far end is never read: the pipe fills, then the queue does.
    let (ours, _theirs) = tokio::io::duplex(64);
    let peer = Peer::spawn(ours);
    let started = std::time::Instant::now();
    for n in 0..(OUTBOUND_CAPACITY * 2) {
        peer.notify("session/update", json!({"n": n}));
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(peer.dropped.load(Ordering::Relaxed) >= OUTBOUND_CAPACITY as u64 - 1);
}

#[tokio::test]
async fn lines_are_read_with_a_bound() {
    let mut text = b"{\"a\":1}\n".to_vec();
    text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 10));
    text.extend(b"\nlast");
    let mut input = tokio::io::BufReader::new(&text[..]);
    assert_eq!(
        read_line(&mut input).await.unwrap(),
        Some(ReadLine::Line("{\"a\":1}".into()))
    );
    assert_eq!(
        read_line(&mut input).await.unwrap(),
        Some(ReadLine::TooLong)
    );
    assert_eq!(
        read_line(&mut input).await.unwrap(),
        Some(ReadLine::Line("last".into()))
    );
    assert_eq!(read_line(&mut input).await.unwrap(), None);
}
