//! Reading and evaluating rules files without trusting them: only regular files, opened
//! without blocking (a FIFO named `x.rules` cannot hang start-up), bounded in size, and
//! evaluated on a thread of their own with a step budget, a time limit and panics caught, so
//! a file that loops, recurses or trips an assertion inside starlark becomes an error that
//! names the file instead of a stuck or dead runtime worker.

use crate::parse::parse_rules;
use crate::{Rules, RulesError};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// A rules file larger than this is refused (real ones are a few KiB).
pub const MAX_RULES_FILE_BYTES: u64 = 1024 * 1024;

/// Wall-clock limit of evaluating one file.
pub const EVAL_TIME_LIMIT: Duration = Duration::from_secs(5);

/// Native stack of the evaluating thread (virtual memory, touched only as used): enough for
/// the nesting `check_nesting` lets through, in debug builds too.
const EVAL_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Loads every `*.rules` file of each directory, off the caller's thread.
pub async fn load_dirs(dirs: &[PathBuf]) -> Result<Rules, RulesError> {
    let dirs = dirs.to_vec();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("troupe-rules-load".into())
        .spawn(move || {
            let _ = tx.send(load_dirs_blocking(&dirs));
        });
    if let Err(err) = spawned {
        return Err(RulesError::Unusable {
            path: PathBuf::from("rules"),
            reason: format!("cannot start the loader thread: {err}"),
        });
    }
    rx.await.unwrap_or_else(|_| {
        Err(RulesError::Unusable {
            path: PathBuf::from("rules"),
            reason: "the loader thread stopped without an answer".into(),
        })
    })
}

/// The blocking body of `load_dirs`: each file is bounded by `EVAL_TIME_LIMIT`.
pub fn load_dirs_blocking(dirs: &[PathBuf]) -> Result<Rules, RulesError> {
    let mut all = Rules::default();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(RulesError::Read {
                    path: dir.clone(),
                    source,
                })
            }
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|ext| ext == "rules"))
            .collect();
        files.sort();
        for file in files {
            all.rules.extend(load_file(&file)?.rules);
        }
    }
    Ok(all)
}

/// Loads one `.rules` file (blocking, bounded).
pub fn load_file(path: &Path) -> Result<Rules, RulesError> {
    let text = read_regular_file(path)?;
    evaluate_bounded(path, text)
}

/// Loads one `.rules` file only if its content passes `accept` (a pinned hash, say): `None`
/// when it does not, or when the file is gone. Blocking and bounded like `load_file`.
pub fn load_file_if(
    path: &Path,
    accept: impl Fn(&str) -> bool,
) -> Result<Option<Rules>, RulesError> {
    let text = match read_regular_file(path) {
        Ok(text) => text,
        Err(RulesError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(err) => return Err(err),
    };
    if !accept(&text) {
        return Ok(None);
    }
    evaluate_bounded(path, text).map(Some)
}

fn unusable(path: &Path, reason: impl Into<String>) -> RulesError {
    RulesError::Unusable {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Reads `path` only if it is a regular file. The type is checked on the path and again on
/// the opened descriptor (the path could be swapped in between); the open itself never
/// blocks (`O_NONBLOCK`: opening a FIFO for reading would wait for a writer).
fn read_regular_file(path: &Path) -> Result<String, RulesError> {
    let read_error = |source| RulesError::Read {
        path: path.to_path_buf(),
        source,
    };
    let not_regular = || unusable(path, "not a regular file (a FIFO, device or directory?)");
    if !std::fs::metadata(path).map_err(read_error)?.is_file() {
        return Err(not_regular());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(read_error)?;
    let metadata = file.metadata().map_err(read_error)?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    if metadata.len() > MAX_RULES_FILE_BYTES {
        return Err(unusable(
            path,
            format!("larger than {MAX_RULES_FILE_BYTES} bytes"),
        ));
    }
    let mut text = String::new();
    file.take(MAX_RULES_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read_error)?;
    if text.len() as u64 > MAX_RULES_FILE_BYTES {
        return Err(unusable(
            path,
            format!("larger than {MAX_RULES_FILE_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// Deepest bracket nesting a rules file may use.
pub const MAX_BRACKET_DEPTH: usize = 100;

/// Most operators one statement may chain (`1+1+…`, `not not …`, `x[0][0]…`, `f()()…`
/// nest as deeply as they are long).
pub const MAX_OPERATORS_PER_STATEMENT: usize = 1000;

/// Deepest indentation, in columns (nested blocks), and most `elif` (each nests the chain).
pub const MAX_INDENT_COLUMNS: usize = 200;
pub const MAX_ELIFS: usize = 1000;

/// Starlark parses and compiles by recursion over the syntax tree: a file nested deeply
/// enough overflows any stack, which aborts the whole process (no panic to catch). So the
/// text is measured first: bracket depth and the operators of each statement, outside
/// strings and comments.
fn check_nesting(path: &Path, text: &str) -> Result<(), RulesError> {
    let mut chars = text.chars().peekable();
    let (mut depth, mut operators, mut elifs) = (0usize, 0usize, 0usize);
    let mut word = String::new();
    let mut line_start = true;
    let mut indent = 0usize;
    while let Some(c) = chars.next() {
        if line_start {
            if c == ' ' || c == '\t' {
                indent += 1;
                if indent > MAX_INDENT_COLUMNS && depth == 0 {
                    return Err(unusable(
                        path,
                        format!("indented deeper than {MAX_INDENT_COLUMNS} columns"),
                    ));
                }
                continue;
            }
            line_start = false;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if matches!(
            word.as_str(),
            "not" | "and" | "or" | "if" | "else" | "lambda" | "in"
        ) {
            operators += 1;
        }
        if word == "elif" {
            elifs += 1;
            if elifs > MAX_ELIFS {
                return Err(unusable(path, format!("more than {MAX_ELIFS} `elif`")));
            }
        }
        word.clear();
        match c {
            '#' => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            '\'' | '"' => {
                let mut escaped = false;
                for n in chars.by_ref() {
                    match n {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        n if n == c => break,
                        _ => {}
                    }
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                operators += 1;
                if depth > MAX_BRACKET_DEPTH {
                    return Err(unusable(
                        path,
                        format!("brackets nested deeper than {MAX_BRACKET_DEPTH}"),
                    ));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '\n' => {
                line_start = true;
                indent = 0;
                if depth == 0 {
                    operators = 0;
                }
            }
            '+' | '-' | '*' | '/' | '%' | '|' | '&' | '^' | '~' | '<' | '>' | '=' | '!' | '.' => {
                operators += 1;
            }
            _ => {}
        }
        if operators > MAX_OPERATORS_PER_STATEMENT {
            return Err(unusable(
                path,
                format!("a statement with more than {MAX_OPERATORS_PER_STATEMENT} operators"),
            ));
        }
    }
    Ok(())
}

/// Evaluates in a child process the kernel bounds when the binary asked for it (see
/// `confined`), else on a dedicated thread: the step budget stops Starlark loops, the time
/// limit stops waiting for anything else (the thread is then left to finish on its own),
/// and a panic is caught.
fn evaluate_bounded(path: &Path, text: String) -> Result<Rules, RulesError> {
    check_nesting(path, &text)?;
    match crate::confined::evaluator() {
        Some(exe) => crate::confined::evaluate_in_child(exe, path, &text),
        None => evaluate_in_process(path, text),
    }
}

/// Evaluates on a thread of its own, with the step budget, the time limit and panics caught
/// (the child of `confined` does this too, under its kernel limits).
pub(crate) fn evaluate_in_process(path: &Path, text: String) -> Result<Rules, RulesError> {
    let name = path.display().to_string();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("troupe-rules-eval".into())
        .stack_size(EVAL_STACK_BYTES)
        .spawn(move || {
            let result = std::panic::catch_unwind(|| parse_rules(&name, &text));
            let _ = tx.send(result);
        });
    if let Err(err) = spawned {
        return Err(unusable(path, format!("cannot start an evaluator: {err}")));
    }
    match rx.recv_timeout(EVAL_TIME_LIMIT) {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(std::string::ToString::to_string)
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(unusable(path, format!("evaluation crashed: {message}")))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(unusable(
            path,
            format!(
                "evaluation did not finish within {} s",
                EVAL_TIME_LIMIT.as_secs()
            ),
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(unusable(path, "evaluation stopped without a result"))
        }
    }
}
