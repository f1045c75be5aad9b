//! Recognising `apply_patch` invocations inside commands, so that they are applied through
//! the structured path (events, approvals, atomic writes) and never run as a process.
//!
//! Forms recognised, as Codex recognises them:
//! - argv `["apply_patch", PATCH]` (or `applypatch`);
//! - a shell script (`bash|zsh|sh -c|-lc SCRIPT`, or an `exec_command` string) that is
//!   exactly `apply_patch <<'EOF'` … `EOF` (any delimiter, quoted or not), optionally
//!   preceded by `cd DIR &&`, or `apply_patch 'PATCH'` as one shell word.
//!
//! Anything else (a pipeline, a second command after the heredoc) is left alone: it is a
//! real command, and the `apply_patch` it calls is Troupe itself under that name.

/// An `apply_patch` found in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchInvocation {
    pub patch: String,
    /// Directory from a leading `cd DIR &&`, relative to the command's working directory.
    pub cd: Option<String>,
}

const NAMES: [&str; 2] = ["apply_patch", "applypatch"];
const SHELLS: [&str; 3] = ["bash", "zsh", "sh"];

/// The patch an argv applies, if it is an `apply_patch` invocation.
pub fn from_argv(argv: &[String]) -> Option<PatchInvocation> {
    match argv {
        [program, patch] if NAMES.contains(&program.as_str()) => Some(PatchInvocation {
            patch: patch.clone(),
            cd: None,
        }),
        [shell, flag, script] if is_shell(shell) && matches!(flag.as_str(), "-c" | "-lc") => {
            from_script(script)
        }
        _ => None,
    }
}

/// The patch a shell script applies, if the whole script is one `apply_patch` invocation.
pub fn from_script(script: &str) -> Option<PatchInvocation> {
    let script = script.trim();
    let (cd, rest) = split_cd(script);
    let rest = rest.trim_start();
    let name = NAMES.iter().find(|name| {
        rest.strip_prefix(**name)
            .is_some_and(|after| after.starts_with(char::is_whitespace))
    })?;
    let after_name = rest[name.len()..].trim_start();
    let patch = if after_name.starts_with("<<") {
        heredoc_body(after_name)?
    } else {
        // `apply_patch 'PATCH'`: exactly one more shell word.
        match shlex::split(after_name)?.as_slice() {
            [patch] => patch.clone(),
            _ => return None,
        }
    };
    Some(PatchInvocation { patch, cd })
}

fn is_shell(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    SHELLS.contains(&base)
}

/// Splits a leading `cd DIR &&` off a script.
fn split_cd(script: &str) -> (Option<String>, &str) {
    let Some(after_cd) = script.strip_prefix("cd ") else {
        return (None, script);
    };
    let Some((dir, rest)) = after_cd.split_once("&&") else {
        return (None, script);
    };
    match shlex::split(dir.trim()).as_deref() {
        Some([dir]) => (Some(dir.clone()), rest),
        _ => (None, script),
    }
}

/// The body of `<<DELIM` / `<<'DELIM'` / `<<"DELIM"` / `<<-DELIM` up to the line `DELIM`,
/// provided nothing but whitespace follows that line.
fn heredoc_body(text: &str) -> Option<String> {
    let spec = text.strip_prefix("<<")?;
    let (spec, strip_tabs) = match spec.strip_prefix('-') {
        Some(spec) => (spec, true),
        None => (spec, false),
    };
    let (header, body) = spec.split_once('\n')?;
    let delimiter = unquote(header.trim())?;
    let mut lines = Vec::new();
    let mut rest = body.split('\n');
    for line in rest.by_ref() {
        let line = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        if line.trim_end() == delimiter {
            let trailing: Vec<&str> = rest.collect();
            return trailing
                .iter()
                .all(|line| line.trim().is_empty())
                .then(|| lines.join("\n"));
        }
        lines.push(line);
    }
    None
}

fn unquote(word: &str) -> Option<&str> {
    let inner = word
        .strip_prefix('\'')
        .and_then(|w| w.strip_suffix('\''))
        .or_else(|| word.strip_prefix('"').and_then(|w| w.strip_suffix('"')))
        .unwrap_or(word);
    let valid = !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    valid.then_some(inner)
}

#[cfg(test)]
#[path = "intercept_tests.rs"]
mod tests;
