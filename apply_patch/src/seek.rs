//! Finding a chunk's old lines in a file, as leniently as Codex: exact (but for a CRLF line
//! ending) first, then ignoring
//! trailing whitespace, then ignoring surrounding whitespace, then also normalising Unicode
//! punctuation (dashes, quotes, odd spaces) that models like to emit in place of ASCII.
//!
//! Each pass scans the whole range before the next, laxer one is tried, so an exact match
//! later in the file wins over a lenient one earlier.

/// The first index at or after `start` where `pattern` matches `lines`. With `end_of_file`,
/// only the position that puts the pattern at the very end of the file is tried (and only
/// if that is not before `start`).
pub fn seek_sequence(
    lines: &[String],
    pattern: &[String],
    start: usize,
    end_of_file: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    // Never before `start`: that part of the file belongs to earlier chunks.
    let first_start = if end_of_file {
        last_start.max(start)
    } else {
        start
    };
    let passes: [fn(&str, &str) -> bool; 4] = [
        // A CRLF file's lines keep their `\r`; the patch's never have one.
        |a, b| a.strip_suffix('\r').unwrap_or(a) == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| normalise(a) == normalise(b),
    ];
    passes.iter().find_map(|same| {
        (first_start..=last_start).find(|&at| {
            lines[at..at + pattern.len()]
                .iter()
                .zip(pattern)
                .all(|(line, wanted)| same(line, wanted))
        })
    })
}

/// Trimmed, with typographic punctuation mapped to its ASCII look-alike.
fn normalise(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
            | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
            | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
#[path = "seek_tests.rs"]
mod tests;
