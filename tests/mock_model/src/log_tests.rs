use crate::{Behaviour, MockModel, MockOptions, MockResponse};
use pretty_assertions::assert_eq;
use serde_json::json;

/// The value of `key=` in a log line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(' ')
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
}

#[tokio::test]
async fn one_line_per_request_with_byte_times_for_streams_only() {
    let dir = std::env::temp_dir().join(format!("mock-log-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("requests.log");
    let mut options = MockOptions::new(Behaviour::Script(vec![
        MockResponse::http(500, "{}"),
        MockResponse::text_from_deltas("abcdef", &["ab".into(), "cd".into(), "ef".into()]),
    ]));
    options.log_file = Some(path.clone());
    let mock = MockModel::start_options(options).await.unwrap();
    let client = reqwest::Client::new();
    let url = format!("{}/responses", mock.base_url());
    for input in [json!([]), json!([{"type": "message"}, {"type": "message"}])] {
        let resp = client
            .post(&url)
            .json(&json!({"input": input}))
            .send()
            .await
            .unwrap();
        let _ = resp.bytes().await.unwrap();
    }
    let log = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");

    let http = lines[0];
    assert!(
        http.starts_with("1 ") && http.contains(" POST /v1/responses "),
        "{http}"
    );
    assert_eq!(field(http, "input_items"), Some("0"));
    assert_eq!(field(http, "first_byte_ns"), Some("-"));
    assert_eq!(field(http, "last_byte_ns"), Some("-"));

    let sse = lines[1];
    assert_eq!(field(sse, "input_items"), Some("2"));
    let time = |key| {
        field(sse, key)
            .and_then(|v| v.parse::<u128>().ok())
            .unwrap()
    };
    assert!(time("recv_ns") <= time("first_byte_ns"), "{sse}");
    assert!(time("first_byte_ns") <= time("last_byte_ns"), "{sse}");
    assert!(time("body_bytes") > 6, "{sse}");
    drop(mock);
    let _ = std::fs::remove_dir_all(&dir);
}
