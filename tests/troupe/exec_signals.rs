//! Signals, orphans and a killed troupe: no command outlives `troupe exec`, the rollout stays
//! valid and unlocked, and the exit status names the signal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

/// A `shell` call running `script` under `sh -c`, allowed to run for two minutes.
fn shell_script(call_id: &str, script: &str) -> MockResponse {
    let args = json!({ "command": ["sh", "-c", script], "timeout_ms": 120_000 }).to_string();
    MockResponse::tool_calls(vec![(call_id, "shell", args)])
}

/// A command that writes its pid to `pid_file`, then becomes `sleep 60`.
fn sleeper(pid_file: &Path) -> String {
    format!("echo $$ > {}; exec sleep 60", pid_file.display())
}

fn spawn_exec(h: &Harness, own_group: bool) -> Child {
    let mut cmd = h.command();
    cmd.args([
        "exec",
        "--skip-git-repo-check",
        "-s",
        "danger-full-access",
        "--json",
        "go",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if own_group {
        cmd.process_group(0);
    }
    cmd.spawn().expect("troupe starts")
}

/// Waits for `path` to hold a pid.
fn wait_for_pid(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a live process (a zombie waiting for init to reap it counts as gone).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Waits until `pid` is gone (processes die asynchronously after SIGKILL).
fn gone_soon(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn wait_with_timeout(child: Child) -> std::process::Output {
    let pid = child.id() as i32;
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(60));
        // SAFETY: plain kill(2); the test fails below if it was needed.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let out = child.wait_with_output().unwrap();
    drop(watchdog);
    out
}

fn lock_files(h: &Harness) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![h.home.path().join("sessions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(".lock") {
                found.push(path);
            }
        }
    }
    found
}

/// Every line of the one rollout, parsed (panics on a torn or invalid line).
fn rollout_lines(h: &Harness) -> Vec<serde_json::Value> {
    let rollouts = h.rollouts();
    assert_eq!(rollouts.len(), 1, "{rollouts:?}");
    std::fs::read_to_string(&rollouts[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn line {l}: {e}")))
        .collect()
}

fn interrupted_recorded(lines: &[serde_json::Value]) -> bool {
    lines.iter().any(|l| {
        l["type"] == "event"
            && l["payload"]["type"] == "turn_aborted"
            && l["payload"]["reason"] == "interrupted"
    })
}

/// Runs a `sleep 60` command, sends `signal` (to troupe, or to its whole group as Ctrl-C
/// does) and checks what is left.
fn signal_during_command(signal: i32, to_group: bool, expected_code: i32) {
    let scratch = tempfile::tempdir().unwrap();
    let pid_file = scratch.path().join("pid");
    let h = Harness::new(vec![
        shell_script("c1", &sleeper(&pid_file)),
        MockResponse::text("never asked"),
    ]);
    let child = spawn_exec(&h, to_group);
    let command = wait_for_pid(&pid_file);
    let troupe = child.id() as i32;
    // SAFETY: plain kill(2)/killpg(2) on processes this test started.
    unsafe {
        if to_group {
            libc::killpg(troupe, signal);
        } else {
            libc::kill(troupe, signal);
        }
    }
    let out = wait_with_timeout(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(expected_code), "stderr: {stderr}");
    assert!(gone_soon(command), "the command {command} outlived troupe");
    assert_eq!(lock_files(&h), Vec::<PathBuf>::new());
    let lines = rollout_lines(&h);
    assert!(interrupted_recorded(&lines), "{lines:#?}");
    assert_eq!(h.mock.request_count(), 1);
}

#[test]
fn sigint_interrupts_the_turn_and_exits_130() {
    signal_during_command(libc::SIGINT, false, 130);
}

#[test]
fn sigterm_interrupts_the_turn_and_exits_143() {
    signal_during_command(libc::SIGTERM, false, 143);
}

#[test]
fn sighup_interrupts_the_turn_and_exits_129() {
    signal_during_command(libc::SIGHUP, false, 129);
}

#[test]
fn ctrl_c_to_the_process_group_interrupts_the_turn() {
    signal_during_command(libc::SIGINT, true, 130);
}

#[test]
fn a_second_sigint_exits_at_once_and_kills_the_command() {
    let scratch = tempfile::tempdir().unwrap();
    let pid_file = scratch.path().join("pid");
    // The command ignores SIGTERM/SIGINT, but the interrupt path kills with SIGKILL anyway;
    // the point is that the second signal does not wait for it.
    let h = Harness::new(vec![shell_script("c1", &sleeper(&pid_file))]);
    let child = spawn_exec(&h, false);
    let command = wait_for_pid(&pid_file);
    let troupe = child.id() as i32;
    // SAFETY: plain kill(2) on the troupe this test started.
    unsafe {
        libc::kill(troupe, libc::SIGINT);
        libc::kill(troupe, libc::SIGINT);
    }
    let out = wait_with_timeout(child);
    assert_eq!(out.status.code(), Some(130));
    assert!(gone_soon(command), "the command {command} outlived troupe");
}

#[test]
fn a_killed_troupe_takes_its_running_command_along() {
    let scratch = tempfile::tempdir().unwrap();
    let pid_file = scratch.path().join("pid");
    let h = Harness::new(vec![shell_script("c1", &sleeper(&pid_file))]);
    let mut child = spawn_exec(&h, false);
    let command = wait_for_pid(&pid_file);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        gone_soon(command),
        "the command {command} outlived a SIGKILLed troupe"
    );
}

#[test]
fn a_setsid_daemon_started_by_a_command_is_gone_after_the_turn() {
    let scratch = tempfile::tempdir().unwrap();
    let pid_file = scratch.path().join("daemon.pid");
    // The command waits until the daemon is up, so it is running when the turn ends.
    let daemon = format!(
        "setsid -f sh -c '{}' </dev/null >/dev/null 2>&1; \
         while [ ! -s {1} ]; do sleep 0.01; done; echo started",
        sleeper(&pid_file),
        pid_file.display()
    );
    let h = Harness::new(vec![
        shell_script("c1", &daemon),
        MockResponse::text("done"),
    ]);
    let child = spawn_exec(&h, false);
    let out = wait_with_timeout(child);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let daemon = wait_for_pid(&pid_file);
    assert!(gone_soon(daemon), "the daemon {daemon} outlived troupe");
}
