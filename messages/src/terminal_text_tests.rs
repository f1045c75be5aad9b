use super::*;

#[test]
fn escape_sequences_become_text_newlines_and_tabs_stay() {
    assert_eq!(visible("\x1b]52;c;SGVsbG8=\x07ok"), "^[]52;c;SGVsbG8=^Gok");
    assert_eq!(visible("\x1b[2J\x1b[H"), "^[[2J^[[H");
    assert_eq!(
        visible("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
        "^[]8;;http://x^[\\link^[]8;;^[\\"
    );
    assert_eq!(visible("a\u{9b}2J\u{202e}"), "a<U+009B>2J<U+202E>");
    assert_eq!(visible("a\tb\r\nc\u{7f}"), "a\tb^M\nc^?");
    assert_eq!(visible("日本語 🎉 é"), "日本語 🎉 é");
}
