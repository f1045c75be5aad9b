//! Evaluating a rules file in a child process the kernel bounds. Inside one process no
//! limit holds every expression: a comprehension, `"x" * n` or a `join` is one statement to
//! the step budget, starlark has no heap limit, and a runaway evaluation cannot be stopped
//! from outside (the time limit only stops waiting for it). A child with `RLIMIT_AS` and
//! `RLIMIT_CPU` ends, and takes its memory with it. The binary opts in at start
//! ([`evaluate_in_children`]) and answers [`CHILD_ARG`] ([`child_main`]); without that
//! (tests, fuzzing, other tools) files are evaluated in-process as before.

use crate::load::{evaluate_in_process, EVAL_TIME_LIMIT};
use crate::{PrefixRule, Rules, RulesError};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The argument that makes the binary a rules evaluator: `BIN __troupe-evaluate-rules
/// NAME`, the file's text on stdin, one JSON answer on stdout.
pub const CHILD_ARG: &str = "__troupe-evaluate-rules";

/// Address space of the evaluating child: the binary, the evaluator's reserved stack and
/// what a real rules file needs fit many times over.
pub const MEMORY_LIMIT_BYTES: u64 = 1 << 30;

static EVALUATOR: OnceLock<PathBuf> = OnceLock::new();

/// From now on every rules file is evaluated by `exe` run with [`CHILD_ARG`].
pub fn evaluate_in_children(exe: PathBuf) {
    let _ = EVALUATOR.set(exe);
}

pub(crate) fn evaluator() -> Option<&'static Path> {
    EVALUATOR.get().map(PathBuf::as_path)
}

/// What the child answers.
#[derive(Serialize, Deserialize)]
enum Answer {
    Rules(Vec<PrefixRule>),
    Starlark(String),
    Example { location: String, message: String },
    Unusable(String),
}

/// The child's side: bounds itself, evaluates the text on stdin as the file `name`, and
/// prints the answer. Returns the exit code.
pub fn child_main(name: &str) -> i32 {
    let cpu_secs = EVAL_TIME_LIMIT.as_secs() + 1;
    // SAFETY: plain system calls on this process with valid `rlimit` values.
    unsafe {
        let memory = libc::rlimit {
            rlim_cur: MEMORY_LIMIT_BYTES,
            rlim_max: MEMORY_LIMIT_BYTES,
        };
        let cpu = libc::rlimit {
            rlim_cur: cpu_secs,
            rlim_max: cpu_secs,
        };
        if libc::setrlimit(libc::RLIMIT_AS, &memory) != 0
            || libc::setrlimit(libc::RLIMIT_CPU, &cpu) != 0
        {
            return 3;
        }
    }
    let mut text = String::new();
    if std::io::stdin().read_to_string(&mut text).is_err() {
        return 3;
    }
    let answer = match evaluate_in_process(Path::new(name), text) {
        Ok(rules) => Answer::Rules(rules.rules),
        Err(RulesError::Starlark(message)) => Answer::Starlark(message),
        Err(RulesError::Example { location, message }) => Answer::Example { location, message },
        Err(RulesError::Unusable { reason, .. }) => Answer::Unusable(reason),
        Err(other) => Answer::Unusable(other.to_string()),
    };
    let Ok(line) = serde_json::to_string(&answer) else {
        return 3;
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        return 3;
    }
    0
}

/// The parent's side: runs `exe` on `text` and turns its answer (or its end) into the
/// result `path` gets.
pub(crate) fn evaluate_in_child(exe: &Path, path: &Path, text: &str) -> Result<Rules, RulesError> {
    let unusable = |reason: String| RulesError::Unusable {
        path: path.to_path_buf(),
        reason,
    };
    let mut child = Command::new(exe)
        .arg(CHILD_ARG)
        .arg(path)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| unusable(format!("cannot start the rules evaluator: {err}")))?;
    // The child reads all of its input before it writes anything.
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(text.as_bytes());
    }
    let mut stdout = child.stdout.take();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut answer = Vec::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.read_to_end(&mut answer);
        }
        let _ = tx.send(answer);
    });
    let Ok(answer) = rx.recv_timeout(EVAL_TIME_LIMIT + std::time::Duration::from_secs(2)) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(unusable(format!(
            "evaluation did not finish within {} s",
            EVAL_TIME_LIMIT.as_secs()
        )));
    };
    let status = child
        .wait()
        .map_err(|err| unusable(format!("the rules evaluator was lost: {err}")))?;
    match serde_json::from_slice::<Answer>(&answer) {
        Ok(Answer::Rules(rules)) => Ok(Rules { rules }),
        Ok(Answer::Starlark(message)) => Err(RulesError::Starlark(message)),
        Ok(Answer::Example { location, message }) => Err(RulesError::Example { location, message }),
        Ok(Answer::Unusable(reason)) => Err(unusable(reason)),
        Err(_) => Err(unusable(ended(status))),
    }
}

/// Why a child that gave no answer ended, in a user's words.
fn ended(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        // An allocation refused by the address-space limit aborts the process.
        Some(libc::SIGABRT | libc::SIGSEGV) => format!(
            "evaluation needed more than {} MiB of memory (a list or string grown without bound?)",
            MEMORY_LIMIT_BYTES >> 20
        ),
        Some(libc::SIGXCPU | libc::SIGKILL) => format!(
            "evaluation used more than {} s of CPU",
            EVAL_TIME_LIMIT.as_secs()
        ),
        Some(signal) => format!("the evaluator was ended by signal {signal}"),
        None => format!("the evaluator exited with {status} and no answer"),
    }
}
