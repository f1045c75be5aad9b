//! Running one hook command: `sh -c COMMAND` in the session's cwd with exactly the given
//! environment (the caller's scrubbed one, nothing inherited), in its own process
//! group, the payload on stdin, stdout and stderr read (bounded) until it exits or its
//! timeout; then the whole group is killed. Dropping the future (an interrupted turn) kills
//! the group too.

use super::output::HookExit;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Output kept per stream; the rest is read and dropped.
const MAX_OUTPUT_BYTES: usize = 1 << 20;

/// What the process left.
pub struct HookProcessOutput {
    pub exit: HookExit,
    pub stdout: String,
    pub stderr: String,
}

/// Kills the process group when dropped (normal end, timeout, or the caller went away).
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

pub async fn run_hook_command(
    command: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
    stdin_json: &[u8],
    timeout: Duration,
) -> HookProcessOutput {
    let crashed = |why: String| HookProcessOutput {
        exit: HookExit::Crashed(why),
        stdout: String::new(),
        stderr: String::new(),
    };
    let mut process = tokio::process::Command::new("sh");
    crate::file_mask::restore_user_mask(&mut process);
    let mut child = match process
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(err) => return crashed(format!("could not start: {err}")),
    };
    let _group = GroupGuard(child.id().map(|pid| pid as i32));
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let payload = stdin_json.to_vec();
    let run = async move {
        // A hook that never reads stdin must not block us: write in the background.
        let writer = async move {
            if let Some(mut stdin) = stdin.take() {
                let _ = stdin.write_all(&payload).await;
                let _ = stdin.shutdown().await;
            }
        };
        let (_, out, err, status) = tokio::join!(
            writer,
            read_bounded(stdout),
            read_bounded(stderr),
            child.wait()
        );
        (out, err, status)
    };
    match tokio::time::timeout(timeout, run).await {
        Err(_) => HookProcessOutput {
            exit: HookExit::TimedOut(timeout.as_secs()),
            stdout: String::new(),
            stderr: String::new(),
        },
        Ok((stdout, stderr, status)) => {
            let exit = match status {
                Ok(status) => match status.code() {
                    Some(code) => HookExit::Exited(code),
                    None => HookExit::Crashed(format!("killed by a signal ({status})")),
                },
                Err(err) => HookExit::Crashed(format!("could not wait for it: {err}")),
            };
            HookProcessOutput {
                exit,
                stdout,
                stderr,
            }
        }
    }
}

async fn read_bounded(stream: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}
