//! Text from the model or a command is shown, never interpreted: every control byte and
//! escape sequence becomes visible text, so output cannot move the cursor, retitle the
//! terminal or write the clipboard (OSC 52).

/// `text` with tabs expanded and every other control character replaced by a visible form
/// (`ESC` → `^[`, C1 controls → `<U+009B>`, DEL → `^?`). Newlines are kept.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        push_visible(&mut out, ch);
    }
    out
}

/// One line's worth: like [`sanitize`] but a newline is shown as `⏎` too.
pub fn sanitize_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch == '\n' {
            out.push('⏎');
        } else {
            push_visible(&mut out, ch);
        }
    }
    out
}

fn push_visible(out: &mut String, ch: char) {
    match ch {
        '\n' => out.push('\n'),
        '\t' => out.push_str("    "),
        '\u{7f}' => out.push_str("^?"),
        c if (c as u32) < 0x20 => {
            out.push('^');
            out.push((b'@' + c as u8) as char);
        }
        // C1 controls (a lone CSI U+009B is an escape sequence on some terminals) and the
        // bidi overrides that can make text read differently from what it is.
        c if ('\u{80}'..='\u{9f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c) =>
        {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        }
        c => out.push(c),
    }
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;
