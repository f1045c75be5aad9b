use super::*;
use crate::wire::Kind;

#[test]
fn a_fresh_cursor_starts_at_the_first_sequence() {
    let cursor = SeqCursor::default();
    assert_eq!(cursor.start(), 1);
    assert_eq!(cursor.last(), 0);
}

#[test]
fn after_a_reconnect_it_resumes_after_the_last_seen_and_drops_redeliveries() {
    let mut cursor = SeqCursor::default();
    assert!(cursor.accept(1));
    assert!(cursor.accept(2));
    // Another thread's messages share the stream: sequences of one subject have gaps.
    assert!(cursor.accept(7));
    assert_eq!(cursor.start(), 8);
    // A new consumer redelivers what the broken one had already given.
    assert!(!cursor.accept(7));
    assert!(!cursor.accept(2));
    assert!(cursor.accept(9));
    assert_eq!(cursor.last(), 9);
}

fn part(seq: u64, text: &str, part: Option<(usize, usize)>) -> ThreadMessage {
    ThreadMessage {
        seq,
        kind: Kind::Rollout,
        payload: bytes::Bytes::from(text.to_string()),
        rollout_path: Some("sessions/x.jsonl".into()),
        part,
    }
}

#[test]
fn parts_join_into_one_message_with_the_last_part_s_sequence() {
    let mut parts = Parts::default();
    assert!(parts
        .add("s", part(4, "ab", Some((1, 3))))
        .unwrap()
        .is_none());
    assert!(parts
        .add("s", part(5, "cd", Some((2, 3))))
        .unwrap()
        .is_none());
    let whole = parts.add("s", part(6, "e", Some((3, 3)))).unwrap().unwrap();
    assert_eq!(&whole.payload[..], b"abcde");
    assert_eq!(whole.seq, 6);
    assert_eq!(whole.part, None);
    let single = parts.add("s", part(7, "z", None)).unwrap().unwrap();
    assert_eq!(&single.payload[..], b"z");
}

#[test]
fn parts_out_of_order_are_malformed() {
    let mut parts = Parts::default();
    assert!(parts.add("s", part(1, "a", Some((2, 2)))).is_err());
    assert!(parts
        .add("s", part(2, "a", Some((1, 2))))
        .unwrap()
        .is_none());
    assert!(parts.add("s", part(3, "b", None)).is_err());
    assert_eq!(parse_part("2/5"), Some((2, 5)));
    assert_eq!(parse_part("x"), None);
}
