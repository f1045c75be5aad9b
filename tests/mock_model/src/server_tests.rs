use super::*;
use crate::events;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn post(mock: &MockModel, body: Value) -> reqwest::Response {
    match client()
        .post(format!("{}/responses", mock.base_url()))
        .header("Authorization", "Bearer test-key")
        .json(&body)
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => panic!("request failed: {e}"),
    }
}

/// Reads the body chunk by chunk; returns the bytes and whether it broke off.
async fn read_body(resp: reqwest::Response) -> (Vec<u8>, usize, bool) {
    use futures::StreamExt;
    let mut stream = resp.bytes_stream();
    let mut bytes = Vec::new();
    let mut chunks = 0;
    while let Some(item) = stream.next().await {
        match item {
            Ok(b) => {
                chunks += 1;
                bytes.extend_from_slice(&b);
            }
            Err(_) => return (bytes, chunks, true),
        }
    }
    (bytes, chunks, false)
}

/// Parses `event:`/`data:` frames back into JSON values.
fn parse_sse(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect()
}

async fn start(script: Vec<MockResponse>) -> MockModel {
    match MockModel::start(script).await {
        Ok(m) => m,
        Err(e) => panic!("start failed: {e}"),
    }
}

fn script_events() -> Vec<Value> {
    vec![
        events::created("resp_1"),
        events::message_item_added("msg_1"),
        events::output_text_delta("msg_1", "héllo ✓ wörld"),
        events::assistant_message_done("msg_1", "héllo ✓ wörld"),
        events::completed("resp_1", 10, 2, 3, 1),
    ]
}

#[tokio::test]
async fn whole_and_odd_bytes_reassemble_to_same_events() {
    let mock = start(vec![
        MockResponse::sse(script_events()),
        MockResponse::sse(script_events()).odd_bytes(7),
    ])
    .await;
    let first = post(&mock, json!({"n": 1})).await;
    assert_eq!(first.status(), 200);
    assert_eq!(
        first
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let (whole, _, broke1) = read_body(first).await;
    let (odd, odd_chunks, broke2) = read_body(post(&mock, json!({"n": 2})).await).await;
    assert!(!broke1 && !broke2);
    assert_eq!(whole, odd);
    assert!(
        odd_chunks > 5,
        "odd chunks should arrive separately, got {odd_chunks}"
    );
    let text = String::from_utf8(whole).unwrap_or_default();
    assert!(text.starts_with("event: response.created\ndata: {"));
    assert_eq!(parse_sse(&text), script_events());
}

#[tokio::test]
async fn http_variant_status_headers_body() {
    let mock = start(vec![
        MockResponse::rate_limited(1),
        MockResponse::context_length_exceeded(),
    ])
    .await;
    let r = post(&mock, json!({})).await;
    assert_eq!(r.status(), 429);
    assert_eq!(
        r.headers().get("retry-after").and_then(|v| v.to_str().ok()),
        Some("1")
    );
    let r = post(&mock, json!({})).await;
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap_or_default();
    assert_eq!(body["error"]["code"], "context_length_exceeded");
}

#[tokio::test]
async fn exhausted_script_returns_500() {
    let mock = start(vec![]).await;
    let r = post(&mock, json!({})).await;
    assert_eq!(r.status(), 500);
    let body: Value = r.json().await.unwrap_or_default();
    assert_eq!(
        body,
        json!({"error": {"message": "mock script exhausted", "type": "server_error"}})
    );
}

#[tokio::test]
async fn drop_after_breaks_the_body() {
    let mock = start(vec![MockResponse::sse(script_events()).drop_after(2)]).await;
    let (bytes, _, broke) = read_body(post(&mock, json!({})).await).await;
    assert!(broke, "body should end with an error");
    let events = parse_sse(&String::from_utf8_lossy(&bytes));
    assert_eq!(events, script_events()[..2].to_vec());
}

#[tokio::test]
async fn stall_after_sends_then_goes_quiet() {
    use futures::StreamExt;
    let mock = start(vec![MockResponse::sse(script_events()).stall_after(1)]).await;
    let mut stream = post(&mock, json!({})).await.bytes_stream();
    let first = stream.next().await;
    assert!(matches!(first, Some(Ok(_))));
    let next = tokio::time::timeout(std::time::Duration::from_millis(300), stream.next()).await;
    assert!(next.is_err(), "stream should stall");
    drop(mock);
    let after = tokio::time::timeout(std::time::Duration::from_secs(5), stream.next()).await;
    assert!(
        matches!(after, Ok(None | Some(Err(_)))),
        "drop should end the stall"
    );
}

#[tokio::test]
async fn raw_is_sent_verbatim_and_push_appends() {
    let mock = start(vec![MockResponse::raw("data: {not json\n\n")]).await;
    mock.push(MockResponse::text("later"));
    let (bytes, _, _) = read_body(post(&mock, json!({})).await).await;
    assert_eq!(bytes, b"data: {not json\n\n");
    let (bytes, _, _) = read_body(post(&mock, json!({})).await).await;
    assert!(String::from_utf8_lossy(&bytes).contains("later"));
    assert_eq!(mock.remaining(), 0);
}

#[tokio::test]
async fn requests_are_recorded_in_order() {
    let mock = start(vec![MockResponse::text("a"), MockResponse::text("b")]).await;
    let _ = read_body(post(&mock, json!({"model": "m", "input": [1]})).await).await;
    let _ = read_body(post(&mock, json!({"model": "m", "input": [1, 2]})).await).await;
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/v1/responses");
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].header("Authorization"), Some("Bearer test-key"));
    assert_eq!(reqs[1].body["input"], json!([1, 2]));
    assert_eq!(reqs[1].input().len(), 2);
    assert_eq!(mock.request_count(), 2);
}

#[tokio::test]
async fn auto_mode_counts_outputs_and_picks_tool() {
    let cfg = AutoConfig {
        tool_calls: 1,
        command: "ls".into(),
        ..AutoConfig::default()
    };
    let mock = match MockModel::start_with(Behaviour::Auto(cfg)).await {
        Ok(m) => m,
        Err(e) => panic!("start failed: {e}"),
    };
    let tools = json!([{"type": "function", "name": "exec_command", "parameters": {}}]);
    let (bytes, _, _) = read_body(post(&mock, json!({"input": [], "tools": tools})).await).await;
    let events = parse_sse(&String::from_utf8_lossy(&bytes));
    let call = events.iter().find(|e| e["item"]["type"] == "function_call");
    assert_eq!(
        call.map(|c| c["item"]["name"].clone()),
        Some(json!("exec_command"))
    );

    let input = json!([{"type": "function_call_output", "call_id": "call_0_0", "output": "x"}]);
    let (bytes, _, _) = read_body(post(&mock, json!({"input": input, "tools": tools})).await).await;
    let events = parse_sse(&String::from_utf8_lossy(&bytes));
    assert!(events
        .iter()
        .any(|e| e["item"]["content"][0]["text"] == "done"));
    assert_eq!(
        events.last().map(|e| e["type"].clone()),
        Some(json!("response.completed"))
    );
}

#[tokio::test]
async fn unknown_paths_get_404_and_are_recorded() {
    let mock = start(vec![MockResponse::text("x")]).await;
    let r = client()
        .get(format!("{}/embeddings", mock.base_url()))
        .send()
        .await;
    assert_eq!(r.map_or(0, |r| r.status().as_u16()), 404);
    assert_eq!(mock.remaining(), 1);
    assert_eq!(mock.requests()[0].path, "/v1/embeddings");
    // `GET /models` lists the mock's models without touching the script.
    let list: serde_json::Value = client()
        .get(format!("{}/models", mock.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["data"][0]["id"], crate::MODELS[0]);
    assert_eq!(mock.remaining(), 1);
}

fn user_body(texts: &[&str]) -> Value {
    let input: Vec<Value> = texts
        .iter()
        .map(|t| json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}))
        .collect();
    json!({"model": "m", "input": input})
}

#[tokio::test]
async fn routes_answer_by_the_last_user_message_and_fall_back_to_the_script() {
    let mock = match MockModel::start(vec![MockResponse::text("main")]).await {
        Ok(m) => m,
        Err(e) => panic!("mock starts: {e}"),
    };
    mock.route("child-a", vec![MockResponse::text("from a")]);
    // The key appears only in an earlier message: the main script answers.
    let resp = post(&mock, user_body(&["child-a task", "later"])).await;
    let (main, _, _) = read_body(resp).await;
    assert!(String::from_utf8_lossy(&main).contains("main"));
    let resp = post(&mock, user_body(&["root", "[agent] child-a task"])).await;
    let (routed, _, _) = read_body(resp).await;
    assert!(String::from_utf8_lossy(&routed).contains("from a"));
    // An exhausted route says so instead of borrowing from the main script.
    let resp = post(&mock, user_body(&["child-a again"])).await;
    assert_eq!(resp.status().as_u16(), 500);
    let (body, _, _) = read_body(resp).await;
    assert!(String::from_utf8_lossy(&body).contains("mock route script exhausted"));
}
