use super::*;

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
