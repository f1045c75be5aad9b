use super::*;

#[test]
fn escape_sequences_become_text() {
    assert_eq!(sanitize("\x1b]0;pwned\x07ok"), "^[]0;pwned^Gok");
    assert_eq!(sanitize("\x1b]52;c;SGVsbG8=\x07"), "^[]52;c;SGVsbG8=^G");
    assert_eq!(sanitize("a\u{9b}2J"), "a<U+009B>2J");
}

#[test]
fn newlines_kept_tabs_expanded_carriage_returns_shown() {
    assert_eq!(sanitize("a\tb\r\nc"), "a    b^M\nc");
    assert_eq!(sanitize_line("a\nb"), "a⏎b");
    assert_eq!(sanitize("del\u{7f}"), "del^?");
}

#[test]
fn unicode_text_untouched() {
    assert_eq!(sanitize("日本語 🎉 é"), "日本語 🎉 é");
}
