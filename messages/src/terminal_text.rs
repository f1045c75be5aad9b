//! Text from a command, a model, a worker or a file, made safe to show on a terminal: every
//! control character and escape sequence becomes visible text, so what is shown cannot move
//! the cursor, clear the screen, retitle the terminal, write the clipboard (OSC 52) or plant
//! a link (OSC 8). Every frontend (the TUI, `troupe exec`'s human output, diffstats and
//! errors printed by the binary) shows such text through this one function.

/// `text` with newlines and tabs kept and every other control character replaced by a
/// visible form: `ESC` → `^[`, other C0 controls → `^X` (`\r` → `^M`), DEL → `^?`, C1
/// controls and bidi overrides → `<U+009B>`.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        push_visible(&mut out, ch);
    }
    out
}

/// Appends `ch` to `out`, in its visible form when it is a control character (newlines and
/// tabs are kept as they are).
pub fn push_visible(out: &mut String, ch: char) {
    match ch {
        '\n' | '\t' => out.push(ch),
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
#[path = "terminal_text_tests.rs"]
mod tests;
