//! A small scanner for the shell language: enough of bash to find every simple command's
//! words (after quote removal) and to know whether anything beyond words and list/pipe
//! operators was used. It never fails: what it does not understand makes the script not
//! plain, and it keeps scanning so later commands are still found.

use std::mem::take;

/// Words that start a compound command or are syntax, not a program to run.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
    "esac", "select", "function", "{", "}", "!", "[[", "]]", "time", "coproc",
];

/// Nesting beyond this is scanned flat (parentheses as separators) instead of recursively.
const MAX_NESTING: usize = 64;

/// What ended a command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Separator {
    /// `&&`, `||`, `|`: a command must follow.
    Joins,
    /// `;`, `&`, `(`, `)`: a command must precede.
    Ends,
    /// A newline or the end of the text: nothing required.
    Soft,
}

/// A here-document whose body starts after the current line.
struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    expands: bool,
}

pub(super) struct Scanner {
    chars: Vec<char>,
    pos: usize,
    nesting: usize,
    commands: Vec<Vec<String>>,
    plain: bool,
    current: Vec<String>,
    word: String,
    in_word: bool,
    /// The word being read used quotes or a backslash (matters for here-doc delimiters).
    word_quoted: bool,
    /// The next word is a redirection target, not an argument.
    discard_next_word: bool,
    /// The discarded word is a here-doc delimiter (`Some(strip_tabs)`).
    heredoc_delimiter: Option<bool>,
    heredocs: Vec<PendingHeredoc>,
    /// An operator that needs a command after it was the last thing seen.
    dangling: bool,
}

impl Scanner {
    pub(super) fn new(text: &str, nesting: usize) -> Self {
        Self {
            chars: text.chars().collect(),
            pos: 0,
            nesting,
            commands: Vec::new(),
            plain: true,
            current: Vec::new(),
            word: String::new(),
            in_word: false,
            word_quoted: false,
            discard_next_word: false,
            heredoc_delimiter: None,
            heredocs: Vec::new(),
            dangling: false,
        }
    }

    pub(super) fn run(&mut self) {
        self.scan(None);
    }

    pub(super) fn finish(mut self) -> (Vec<Vec<String>>, bool) {
        self.end_word();
        self.end_command(Separator::Soft);
        if self.dangling || !self.heredocs.is_empty() {
            self.plain = false;
        }
        (self.commands, self.plain)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.pos += 1;
        }
        found
    }

    fn push(&mut self, c: char) {
        self.in_word = true;
        self.word.push(c);
    }

    /// Scans commands until `end` (consumed) or the end of the text.
    fn scan(&mut self, end: Option<char>) {
        while let Some(c) = self.next() {
            if Some(c) == end {
                self.end_word();
                self.end_command(Separator::Soft);
                return;
            }
            match c {
                ' ' | '\t' => self.end_word(),
                '\n' => {
                    self.end_word();
                    self.end_command(Separator::Soft);
                    self.read_heredoc_bodies();
                }
                ';' => {
                    if self.eat(';') || self.eat('&') {
                        self.plain = false;
                    }
                    self.separate(Separator::Ends);
                }
                '&' if self.eat('&') => self.separate(Separator::Joins),
                '&' if self.peek() == Some('>') => {
                    self.pos += 1;
                    self.eat('>');
                    self.redirect();
                }
                '&' => {
                    // A background job: not something we vouch for.
                    self.plain = false;
                    self.separate(Separator::Ends);
                }
                '|' => {
                    if !self.eat('|') && self.eat('&') {
                        self.plain = false;
                    }
                    self.separate(Separator::Joins);
                }
                '<' | '>' => self.redirection(c),
                '(' => {
                    self.plain = false;
                    self.separate(Separator::Soft);
                    self.nested(')');
                }
                ')' => {
                    self.plain = false;
                    self.separate(Separator::Soft);
                }
                '\'' => self.single_quoted(),
                '"' => {
                    self.in_word = true;
                    self.word_quoted = true;
                    self.double_quoted(Some('"'));
                }
                '\\' => {
                    self.word_quoted = true;
                    match self.next() {
                        Some('\n') | None => {}
                        Some(other) => self.push(other),
                    }
                }
                '$' => {
                    self.plain = false;
                    self.dollar(false);
                }
                '`' => {
                    self.plain = false;
                    self.backtick();
                }
                '#' if !self.in_word => {
                    // A comment: harmless, but not plain (keeps the rule simple).
                    self.plain = false;
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '~' | '!' if !self.in_word => {
                    self.plain = false;
                    self.push(c);
                }
                // Globs and brace expansion turn one word into any number of words.
                '*' | '?' | '[' | '{' | '}' => {
                    self.plain = false;
                    self.push(c);
                }
                other => self.push(other),
            }
        }
        if end.is_some() {
            // Unterminated `(` or `$(`.
            self.plain = false;
        }
    }

    fn separate(&mut self, separator: Separator) {
        self.end_word();
        self.end_command(separator);
    }

    fn end_word(&mut self) {
        if !self.in_word {
            return;
        }
        let word = take(&mut self.word);
        let quoted = take(&mut self.word_quoted);
        self.in_word = false;
        if take(&mut self.discard_next_word) {
            if let Some(strip_tabs) = self.heredoc_delimiter.take() {
                self.heredocs.push(PendingHeredoc {
                    delimiter: word,
                    strip_tabs,
                    expands: !quoted,
                });
            }
            return;
        }
        self.current.push(word);
    }

    fn end_command(&mut self, separator: Separator) {
        if take(&mut self.discard_next_word) {
            // A redirection with no target: a syntax error.
            self.plain = false;
            self.heredoc_delimiter = None;
        }
        let mut words = take(&mut self.current);
        let prefix = words
            .iter()
            .take_while(|w| RESERVED.contains(&w.as_str()) || super::is_assignment(w))
            .count();
        if prefix > 0 {
            self.plain = false;
            words.drain(..prefix);
        }
        if words.is_empty() {
            if separator != Separator::Soft && (self.dangling || prefix == 0) {
                // `&& ls`, `a && && b`, `; ls`: a syntax error or something exotic.
                self.plain = false;
            }
        } else {
            self.commands.push(words);
            self.dangling = false;
        }
        if separator == Separator::Joins {
            self.dangling = true;
        }
    }

    /// `<`, `>`, `>>`, `2>&1`, `<<EOF`, `<<<word`…: never plain; the target is not an argument.
    fn redirection(&mut self, first: char) {
        if self.in_word && self.word.chars().all(|c| c.is_ascii_digit()) && !self.word_quoted {
            // The file descriptor of `2>`: part of the operator, not a word.
            self.word.clear();
            self.in_word = false;
        }
        self.end_word();
        if first == '<' && self.eat('<') {
            if self.eat('<') {
                self.redirect();
                return;
            }
            let strip_tabs = self.eat('-');
            self.redirect();
            self.heredoc_delimiter = Some(strip_tabs);
            return;
        }
        let _ = self.eat('>') || self.eat('&') || self.eat('|');
        self.redirect();
    }

    fn redirect(&mut self) {
        self.plain = false;
        self.end_word();
        self.discard_next_word = true;
    }

    /// After a newline: the bodies of the here-docs opened on that line.
    fn read_heredoc_bodies(&mut self) {
        for heredoc in take(&mut self.heredocs) {
            let mut body = String::new();
            loop {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                let at_end = self.next().is_none();
                let line = if heredoc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == heredoc.delimiter {
                    break;
                }
                body.push_str(line);
                body.push('\n');
                if at_end {
                    self.plain = false;
                    break;
                }
            }
            if heredoc.expands {
                let mut inner = Scanner::new(&body, self.nesting + 1);
                inner.double_quoted(None);
                self.commands.extend(inner.commands);
            }
        }
    }

    fn single_quoted(&mut self) {
        self.in_word = true;
        self.word_quoted = true;
        loop {
            match self.next() {
                Some('\'') => return,
                Some(c) => self.word.push(c),
                None => {
                    self.plain = false;
                    return;
                }
            }
        }
    }

    /// The inside of `"…"` (or a here-doc body when `end` is `None`, or `${…}` with `}`).
    fn double_quoted(&mut self, end: Option<char>) {
        loop {
            let Some(c) = self.next() else {
                if end.is_some() {
                    self.plain = false;
                }
                return;
            };
            match c {
                c if Some(c) == end => return,
                '\\' => match self.next() {
                    Some(esc @ ('"' | '\\' | '$' | '`')) => self.word.push(esc),
                    Some('\n') | None => {}
                    Some(other) => {
                        self.word.push('\\');
                        self.word.push(other);
                    }
                },
                '$' => {
                    self.plain = false;
                    self.dollar(true);
                }
                '`' => {
                    self.plain = false;
                    self.backtick();
                }
                other => self.word.push(other),
            }
        }
    }

    /// After `$`: a substitution, a parameter, ANSI-C quoting, or a literal `$`.
    fn dollar(&mut self, in_double_quotes: bool) {
        self.in_word = true;
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.word.push_str("$(…)");
                self.nested(')');
            }
            Some('{') => {
                self.pos += 1;
                self.word.push_str("${");
                self.double_quoted(Some('}'));
                self.word.push('}');
            }
            Some('\'') if !in_double_quotes => {
                self.pos += 1;
                self.word_quoted = true;
                self.ansi_c_quoted();
            }
            _ => self.word.push('$'),
        }
    }

    /// Scans a nested script up to `end` (`$( … )`, `( … )`) into the same command list.
    fn nested(&mut self, end: char) {
        if self.nesting >= MAX_NESTING {
            // Too deep to follow: keep scanning flat, so no word goes unseen.
            return;
        }
        let saved_current = take(&mut self.current);
        let saved_word = take(&mut self.word);
        let saved_in_word = take(&mut self.in_word);
        let saved_quoted = take(&mut self.word_quoted);
        let saved_discard = take(&mut self.discard_next_word);
        let saved_heredoc = self.heredoc_delimiter.take();
        let saved_dangling = take(&mut self.dangling);
        self.nesting += 1;
        self.scan(Some(end));
        self.nesting -= 1;
        if self.dangling || self.discard_next_word {
            self.plain = false;
        }
        self.current = saved_current;
        self.word = saved_word;
        self.in_word = saved_in_word;
        self.word_quoted = saved_quoted;
        self.discard_next_word = saved_discard;
        self.heredoc_delimiter = saved_heredoc;
        self.dangling = saved_dangling;
    }

    /// `` `…` ``: the text up to the closing backtick, scanned as a script of its own.
    fn backtick(&mut self) {
        self.in_word = true;
        self.word.push_str("`…`");
        let mut inner = String::new();
        loop {
            match self.next() {
                Some('`') => break,
                Some('\\') => match self.next() {
                    Some(esc @ ('`' | '\\' | '$')) => inner.push(esc),
                    Some(other) => {
                        inner.push('\\');
                        inner.push(other);
                    }
                    None => break,
                },
                Some(c) => inner.push(c),
                None => break,
            }
        }
        // Always scanned: each level of backticks doubles the escaping, so depth is bounded
        // by the text's size, and the sub-scanner's own `$(` nesting is capped.
        let mut scanner = Scanner::new(&inner, self.nesting + 1);
        scanner.run();
        let (commands, _) = scanner.finish();
        self.commands.extend(commands);
    }

    /// `$'…'`: bash's ANSI-C quoting, decoded so `$'\x72m'` is seen as `rm`.
    fn ansi_c_quoted(&mut self) {
        loop {
            match self.next() {
                Some('\'') | None => return,
                Some('\\') => {
                    let Some(esc) = self.next() else { return };
                    let decoded = match esc {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'a' => '\x07',
                        'b' => '\x08',
                        'e' | 'E' => '\x1b',
                        'f' => '\x0c',
                        'v' => '\x0b',
                        'x' => self.code_point(16, 2).unwrap_or('x'),
                        'u' => self.code_point(16, 4).unwrap_or('u'),
                        'U' => self.code_point(16, 8).unwrap_or('U'),
                        '0'..='7' => {
                            self.pos -= 1;
                            self.code_point(8, 3).unwrap_or('0')
                        }
                        other => other,
                    };
                    self.word.push(decoded);
                }
                Some(c) => self.word.push(c),
            }
        }
    }

    fn code_point(&mut self, radix: u32, max_digits: usize) -> Option<char> {
        let start = self.pos;
        while self.pos - start < max_digits && self.peek().is_some_and(|c| c.is_digit(radix)) {
            self.pos += 1;
        }
        let digits: String = self.chars[start..self.pos].iter().collect();
        u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
    }
}
