//! A SIGKILLed troupe takes every process its unconfined commands started along — the shell's
//! children, background jobs that ignore the usual signals, double forks, `setsid` daemons,
//! `exec_command` sessions on a terminal or on pipes — at many points while they run, and the
//! thread resumes afterwards with nothing lost (the call, its request, the user's message).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

/// When, after the command said it is ready, troupe is killed: ten points per kind of
/// command, from at once to well into its run.
const KILL_AFTER_READY_MS: [u64; 10] = [0, 2, 5, 10, 20, 35, 50, 80, 120, 250];

/// What the command does under the marker `KB=token`, touching `ready` once all is running.
#[derive(Clone, Copy)]
enum Kind {
    /// `shell`: a background `sleep` and a foreground one.
    ShellChildren,
    /// `shell`: a `setsid -f` daemon with its own session and no pipes.
    ShellDaemon,
    /// `shell`: a subshell ignoring HUP, TERM and INT.
    ShellStubborn,
    /// `exec_command` on a pseudo-terminal with a background job ignoring the hang-up.
    TerminalSession,
    /// `exec_command` on pipes with a double fork.
    PipedSession,
    /// `shell` in the `landlock` sandbox (no PID namespace): a subshell ignoring HUP, TERM
    /// and INT beside a foreground `sleep`.
    LandlockStubborn,
}

fn script(kind: Kind, token: &str, ready: &Path) -> String {
    let ready = ready.display();
    match kind {
        Kind::ShellChildren => {
            format!("export KB={token}; sleep 30 & touch {ready}; sleep 30")
        }
        Kind::ShellDaemon => format!(
            "export KB={token}; setsid -f sh -c 'sleep 30' </dev/null >/dev/null 2>&1; \
             touch {ready}; sleep 30"
        ),
        // On a terminal, the hang-up its closing sends would end a plain job.
        Kind::ShellStubborn | Kind::TerminalSession | Kind::LandlockStubborn => format!(
            "export KB={token}; (trap '' HUP TERM INT; sleep 30; sleep 30) & \
             trap '' HUP TERM INT; touch {ready}; sleep 30"
        ),
        Kind::PipedSession => {
            format!("export KB={token}; (sh -c 'sleep 30 &' &); touch {ready}; sleep 30")
        }
    }
}

fn call(kind: Kind, script: String) -> MockResponse {
    match kind {
        Kind::TerminalSession | Kind::PipedSession => {
            let args = json!({
                "cmd": script,
                "login": false,
                "tty": matches!(kind, Kind::TerminalSession),
                "yield_time_ms": 30_000
            });
            MockResponse::tool_calls(vec![("c1", "exec_command", args.to_string())])
        }
        _ => {
            let args = json!({ "command": ["sh", "-c", script], "timeout_ms": 120_000 });
            MockResponse::tool_calls(vec![("c1", "shell", args.to_string())])
        }
    }
}

/// Live processes whose environment holds `KB=token`.
fn marked(token: &str) -> Vec<i32> {
    let wanted = format!("KB={token}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        if state.starts_with('Z') || state.starts_with('X') {
            continue;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|e| e == wanted.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

fn wait_for(path: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn kill_point(kind: Kind, label: &str, delay_ms: u64) {
    let scratch = tempfile::tempdir().unwrap();
    let ready = scratch.path().join("ready");
    let token = format!("{label}-{delay_ms}-{}", std::process::id());
    let h = Harness::new(vec![
        call(kind, script(kind, &token, &ready)),
        MockResponse::text("done"),
    ]);
    let config = ["-c", "shell_tool_type=\"exec_command\""];
    let landlock = ["-c", "sandbox_backend=\"landlock\""];
    let extra: &[&str] = match kind {
        Kind::TerminalSession | Kind::PipedSession => &config,
        Kind::LandlockStubborn => &landlock,
        _ => &[],
    };
    let sandbox = match kind {
        Kind::LandlockStubborn => "workspace-write",
        _ => "danger-full-access",
    };
    let mut troupe = h
        .command()
        .args(["exec", "--skip-git-repo-check", "-s", sandbox])
        .args(extra)
        .args(["--json", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&ready, "the command's start");
    std::thread::sleep(Duration::from_millis(delay_ms));
    troupe.kill().unwrap();
    troupe.wait().unwrap();

    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = marked(&token);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = marked(&token);
    }
    let described: Vec<String> = left
        .iter()
        .map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            )
        })
        .collect();
    for pid in &left {
        // SAFETY: plain kill(2) of a leftover, so a failing point leaves nothing running.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(
        described.is_empty(),
        "{label}, killed {delay_ms} ms after the start: outlived troupe: {described:?}"
    );

    let resumed = h
        .command()
        .args(["exec", "--skip-git-repo-check", "-s", sandbox])
        .args(extra)
        .args(["resume", "--last", "again"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{label} at {delay_ms} ms: resume failed: {}",
        stderr(&resumed)
    );
    let requests = h.mock.requests();
    let body = requests.last().unwrap().body.to_string();
    for kept in ["\"go\"", "\"c1\"", "\"again\""] {
        assert!(
            body.contains(kept),
            "{label} at {delay_ms} ms: the resumed request lost {kept}: {body}"
        );
    }
}

fn battery(kind: Kind, label: &str) {
    for delay in KILL_AFTER_READY_MS {
        kill_point(kind, label, delay);
    }
}

#[test]
fn shell_children_die_with_a_killed_troupe() {
    battery(Kind::ShellChildren, "shell-children");
}

#[test]
fn a_setsid_daemon_dies_with_a_killed_troupe() {
    battery(Kind::ShellDaemon, "shell-daemon");
}

#[test]
fn a_job_ignoring_hangups_dies_with_a_killed_troupe() {
    battery(Kind::ShellStubborn, "shell-stubborn");
}

#[test]
fn a_terminal_session_dies_with_a_killed_troupe() {
    battery(Kind::TerminalSession, "terminal-session");
}

#[test]
fn a_piped_session_dies_with_a_killed_troupe() {
    battery(Kind::PipedSession, "piped-session");
}

#[test]
fn a_landlock_sandboxed_command_s_tree_dies_with_a_killed_troupe() {
    battery(Kind::LandlockStubborn, "landlock-stubborn");
}
