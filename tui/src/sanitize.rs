//! Text from the model or a command is shown, never interpreted (the shared
//! [`troupe_messages::terminal_text`] rules), with tabs expanded for the cell grid.

use troupe_messages::terminal_text::push_visible;

/// `text` with tabs expanded and every other control character replaced by a visible form
/// (`ESC` → `^[`, C1 controls → `<U+009B>`, DEL → `^?`). Newlines are kept.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        push_cell(&mut out, ch);
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
            push_cell(&mut out, ch);
        }
    }
    out
}

fn push_cell(out: &mut String, ch: char) {
    if ch == '\t' {
        out.push_str("    ");
    } else {
        push_visible(out, ch);
    }
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;
