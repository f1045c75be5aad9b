use super::live_output::{complete_utf8_len, LiveOutput, FLUSH_BYTES};
use std::sync::{Arc, Mutex};
use troupe_messages::events::ExecOutputStream;
use troupe_messages::tools::ExecOutputSink;

type Sent = Arc<Mutex<Vec<(ExecOutputStream, String)>>>;

fn live(budget: usize) -> (LiveOutput, Sent) {
    let sent: Sent = Arc::default();
    let into = sent.clone();
    let sink = ExecOutputSink(Arc::new(move |stream, chunk| {
        into.lock().unwrap().push((stream, chunk));
    }));
    (LiveOutput::new(sink, budget), sent)
}

#[test]
fn an_incomplete_character_at_the_end_waits_for_its_last_bytes() {
    let euro = "€".as_bytes(); // 3 bytes
    assert_eq!(complete_utf8_len(b"abc"), 3);
    assert_eq!(complete_utf8_len(&euro[..1]), 0);
    assert_eq!(complete_utf8_len(&[b'a', euro[0], euro[1]]), 1);
    assert_eq!(complete_utf8_len(&[b'a', euro[0], euro[1], euro[2]]), 4);
    // An invalid byte is not held back (it is replaced as it is).
    assert_eq!(complete_utf8_len(&[b'a', 0xFF]), 2);
    assert_eq!(complete_utf8_len(&[0x80, 0x80, 0x80, 0x80, 0x80]), 5);
}

#[test]
fn a_character_split_across_reads_is_sent_whole() {
    let (live, sent) = live(1000);
    let mut out = live.stream(ExecOutputStream::Stdout);
    let euro = "€".as_bytes();
    out.push(&[b'a', euro[0]]);
    out.flush();
    out.push(&euro[1..]);
    out.finish();
    let sent = sent.lock().unwrap();
    let texts: Vec<&str> = sent.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts, ["a", "€"]);
}

#[test]
fn small_pieces_wait_for_the_timer_and_large_ones_go_at_once() {
    let (live, sent) = live(100_000);
    let mut out = live.stream(ExecOutputStream::Stderr);
    out.push(b"one ");
    out.push(b"two");
    assert!(sent.lock().unwrap().is_empty());
    assert!(out.deadline().is_some());
    out.push(&vec![b'x'; FLUSH_BYTES]);
    assert_eq!(sent.lock().unwrap().len(), 1);
    assert!(out.deadline().is_none(), "nothing pending after a flush");
    let (stream, text) = sent.lock().unwrap()[0].clone();
    assert_eq!(stream, ExecOutputStream::Stderr);
    assert!(text.starts_with("one twoxxx"));
}

#[test]
fn both_pipes_share_the_budget_and_stop_at_it() {
    let (live, sent) = live(10);
    let mut stdout = live.stream(ExecOutputStream::Stdout);
    let mut stderr = live.stream(ExecOutputStream::Stderr);
    stdout.push(b"123456");
    stdout.flush();
    stderr.push(b"abcdef");
    stderr.flush();
    stderr.push(b"more");
    stderr.flush();
    stdout.push(b"more");
    stdout.finish();
    let sent = sent.lock().unwrap();
    let total: usize = sent.iter().map(|(_, t)| t.len()).sum();
    assert_eq!(total, 10);
    assert_eq!(sent[1].1, "abcd");
}

#[test]
fn the_budget_cut_never_splits_a_character() {
    let (live, sent) = live(4);
    let mut out = live.stream(ExecOutputStream::Stdout);
    out.push("ab€".as_bytes()); // 5 bytes: "ab" fits, "€" does not
    out.finish();
    assert_eq!(sent.lock().unwrap()[0].1, "ab");
}
