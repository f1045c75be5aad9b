//! Splitting `bash -lc "a && b | c"` into its simple commands, so rules and the known-safe
//! list judge each part. Anything we cannot analyse exactly (substitutions, redirections,
//! subshells, here-docs) makes the split fail: the caller then treats the script as one
//! opaque command, which is never known-safe.

/// The script of `bash|sh|zsh -c|-lc SCRIPT`, if `argv` is such a wrapper.
pub fn shell_script(argv: &[String]) -> Option<&str> {
    let [shell, flag, script] = argv else {
        return None;
    };
    let name = shell.rsplit('/').next().unwrap_or(shell);
    let shell_ok = matches!(name, "bash" | "sh" | "zsh" | "dash");
    let flag_ok = matches!(flag.as_str(), "-c" | "-lc" | "-cl");
    (shell_ok && flag_ok).then_some(script.as_str())
}

/// The simple commands of `argv`: one part for a plain argv, each part of a shell wrapper's
/// script joined by `&&`, `||`, `;`, `|` or newlines. `None` when the script uses syntax that
/// is not a plain list of words.
pub fn command_parts(argv: &[String]) -> Option<Vec<Vec<String>>> {
    match shell_script(argv) {
        Some(script) => split_script(script),
        None => Some(vec![argv.to_vec()]),
    }
}

/// Splits a script made only of words, quotes and the list/pipe operators.
pub fn split_script(script: &str) -> Option<Vec<Vec<String>>> {
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let end_part = |current: &mut Vec<String>, parts: &mut Vec<Vec<String>>| -> bool {
        if current.is_empty() {
            return false;
        }
        parts.push(std::mem::take(current));
        true
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            esc @ ('"' | '\\' | '$' | '`') => word.push(esc),
                            '\n' => {}
                            other => {
                                word.push('\\');
                                word.push(other);
                            }
                        },
                        '$' | '`' => return None,
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next()? {
                    '\n' => {}
                    other => word.push(other),
                }
            }
            ' ' | '\t' => {
                if in_word {
                    current.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '&' | '|' | ';' | '\n' => {
                if in_word {
                    current.push(std::mem::take(&mut word));
                    in_word = false;
                }
                let doubled = matches!(c, '&' | '|') && chars.peek() == Some(&c);
                if doubled {
                    chars.next();
                } else if c == '&' {
                    // A lone `&` backgrounds a job: not something we vouch for.
                    return None;
                }
                let ended = end_part(&mut current, &mut parts);
                if !ended && c != '\n' {
                    // `&& x`, `a ;; b`, `| x`: a syntax error or something exotic.
                    return None;
                }
            }
            '$' | '`' | '(' | ')' | '<' | '>' | '{' | '}' | '*' | '?' | '[' | '~' | '#'
                if !in_word || matches!(c, '$' | '`' | '(' | ')' | '<' | '>') =>
            {
                return None;
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        current.push(word);
    }
    end_part(&mut current, &mut parts);
    // A trailing `&&` or `|` leaves nothing after it: reject as incomplete.
    let trimmed = script.trim_end();
    if trimmed.ends_with("&&") || trimmed.ends_with("||") || trimmed.ends_with('|') {
        return None;
    }
    (!parts.is_empty()).then_some(parts)
}

#[cfg(test)]
#[path = "shell_split_tests.rs"]
mod tests;
