use super::*;
use crate::events;
use crate::response::encode_event;
use pretty_assertions::assert_eq;

fn sample() -> Vec<Value> {
    vec![
        events::created("resp_1"),
        events::output_text_delta("msg_1", "héllo ✓✓✓✓✓✓✓✓ wörld"),
        events::completed("resp_1", 1, 0, 1, 0),
    ]
}

async fn collect(s: BoxStream<'static, Chunk>) -> (Vec<Bytes>, bool) {
    let items: Vec<Chunk> = s.collect().await;
    let failed = items.iter().any(Result::is_err);
    (items.into_iter().filter_map(Result::ok).collect(), failed)
}

#[test]
fn odd_chunks_cover_all_bytes() {
    let chunks = odd_chunks(b"abcdefghij".to_vec(), 3);
    let sizes: Vec<usize> = chunks.iter().map(Bytes::len).collect();
    assert_eq!(sizes, vec![3, 3, 3, 1]);
    assert_eq!(odd_chunks(b"ab".to_vec(), 0).len(), 2);
}

#[tokio::test]
async fn whole_and_odd_bytes_carry_same_bytes() {
    let (whole, e1) = collect(sse_stream(
        &sample(),
        Chunking::Whole,
        StreamEnd::Complete,
        None,
    ))
    .await;
    let (odd, e2) = collect(sse_stream(
        &sample(),
        Chunking::OddBytes(7),
        StreamEnd::Complete,
        None,
    ))
    .await;
    assert!(!e1 && !e2);
    assert_eq!(whole.len(), 3);
    assert!(odd.iter().all(|c| c.len() <= 7));
    assert!(
        odd.iter().any(|c| std::str::from_utf8(c).is_err()),
        "a UTF-8 char should be split"
    );
    assert_eq!(whole.concat(), odd.concat());
    let expected: String = sample().iter().map(encode_event).collect();
    assert_eq!(whole.concat(), expected.into_bytes());
}

#[tokio::test]
async fn drop_after_sends_prefix_then_fails() {
    let (chunks, failed) = collect(sse_stream(
        &sample(),
        Chunking::Whole,
        StreamEnd::DropAfter(1),
        None,
    ))
    .await;
    assert!(failed);
    assert_eq!(chunks, vec![Bytes::from(encode_event(&sample()[0]))]);
}

#[test]
fn parse_body_falls_back_to_text() {
    assert_eq!(parse_body(b""), Value::Null);
    assert_eq!(parse_body(b"{\"a\":1}"), serde_json::json!({"a": 1}));
    assert_eq!(parse_body(b"nope"), Value::String("nope".into()));
}
