use super::head_tail::{truncate_head_tail, HeadTailBuffer};
use pretty_assertions::assert_eq;

#[test]
fn small_output_is_kept_whole() {
    let mut buf = HeadTailBuffer::new(10);
    buf.push(b"abc");
    buf.push(b"de");
    assert_eq!(buf.render(), "abcde");
    assert_eq!(buf.dropped(), 0);
}

#[test]
fn flood_keeps_head_and_tail_and_counts_the_middle() {
    let mut buf = HeadTailBuffer::new(8);
    for chunk in [b"0123".as_slice(), b"4567", b"89ab", b"cdef"] {
        buf.push(chunk);
    }
    assert_eq!(buf.dropped(), 8);
    assert_eq!(buf.render(), "0123\n[... 8 bytes truncated ...]\ncdef");
}

#[test]
fn one_huge_chunk() {
    let mut buf = HeadTailBuffer::new(4);
    buf.push(&[b'x'; 1000]);
    buf.push(b"yz");
    assert_eq!(buf.dropped(), 998);
    assert_eq!(buf.render(), "xx\n[... 998 bytes truncated ...]\nyz");
}

#[test]
fn string_truncation_respects_char_boundaries() {
    let text = "ééééé"; // 10 bytes
    let out = truncate_head_tail(text, 5);
    assert!(out.starts_with("éé") || out.starts_with('é'), "{out}");
    assert!(out.ends_with("éé") || out.ends_with('é'), "{out}");
    assert_eq!(truncate_head_tail("short", 10), "short");
}
