//! A small syntax highlighter for fenced code: keywords, strings, comments and numbers of
//! the common languages, line by line. Enough to read code at a glance without pulling in a
//! grammar engine (and its start-up cost) for every frame.

use crate::theme;
use ratatui::text::Span;

const KEYWORDS: &[&str] = &[
    "as",
    "async",
    "await",
    "break",
    "case",
    "class",
    "const",
    "continue",
    "def",
    "default",
    "do",
    "elif",
    "else",
    "enum",
    "export",
    "extern",
    "false",
    "fi",
    "fn",
    "for",
    "from",
    "func",
    "function",
    "if",
    "impl",
    "import",
    "in",
    "interface",
    "let",
    "loop",
    "match",
    "mod",
    "mut",
    "new",
    "nil",
    "None",
    "null",
    "package",
    "pub",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "switch",
    "then",
    "trait",
    "true",
    "True",
    "False",
    "try",
    "type",
    "use",
    "var",
    "where",
    "while",
    "with",
    "yield",
];

/// Whether `#` starts a comment in this language (shells, Python, TOML, YAML…).
fn hash_comments(lang: &str) -> bool {
    matches!(
        lang,
        "sh" | "bash"
            | "zsh"
            | "shell"
            | "console"
            | "py"
            | "python"
            | "toml"
            | "yaml"
            | "yml"
            | "rb"
            | "ruby"
            | "make"
            | "makefile"
            | "dockerfile"
            | "conf"
    )
}

/// The spans of one line of code in `lang` (already sanitised).
pub fn highlight_line(line: &str, lang: &str) -> Vec<Span<'static>> {
    let hash = hash_comments(lang);
    let mut spans = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let flush_word = |word: &mut String, spans: &mut Vec<Span<'static>>| {
        if word.is_empty() {
            return;
        }
        let text = std::mem::take(word);
        let style = if KEYWORDS.contains(&text.as_str()) {
            theme::keyword()
        } else if text.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            theme::number()
        } else {
            theme::code()
        };
        spans.push(Span::styled(text, style));
    };
    while i < chars.len() {
        let c = chars[i];
        let rest_is_comment = (c == '/' && chars.get(i + 1) == Some(&'/'))
            || (c == '-' && chars.get(i + 1) == Some(&'-') && lang == "sql")
            || (c == '#' && hash);
        if rest_is_comment {
            flush_word(&mut word, &mut spans);
            spans.push(Span::styled(
                chars[i..].iter().collect::<String>(),
                theme::comment(),
            ));
            return spans;
        }
        if c == '"' || c == '\'' || c == '`' {
            flush_word(&mut word, &mut spans);
            let mut end = i + 1;
            while end < chars.len() && chars[end] != c {
                if chars[end] == '\\' {
                    end += 1;
                }
                end += 1;
            }
            let end = (end + 1).min(chars.len());
            spans.push(Span::styled(
                chars[i..end].iter().collect::<String>(),
                theme::string(),
            ));
            i = end;
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush_word(&mut word, &mut spans);
            spans.push(Span::styled(c.to_string(), theme::code()));
        }
        i += 1;
    }
    flush_word(&mut word, &mut spans);
    merge_adjacent(spans)
}

/// Neighbouring spans of one style become one (fewer spans to lay out per frame).
fn merge_adjacent(spans: Vec<Span<'static>>) -> Vec<Span<'static>> {
    let mut merged: Vec<Span<'static>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if last.style == span.style => {
                last.content = format!("{}{}", last.content, span.content).into();
            }
            _ => merged.push(span),
        }
    }
    merged
}
