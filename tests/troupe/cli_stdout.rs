//! No subcommand panics when stdout is closed or full: a closed pipe ends quietly with status
//! 141 (as a process killed by SIGPIPE), a full device with a clear error and status 1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output, Stdio};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

#[derive(Clone, Copy, Debug)]
enum Stdout {
    ClosedPipe,
    DevFull,
}

fn run(mut cmd: Command, stdout: Stdout) -> Output {
    cmd.stdin(Stdio::null()).stderr(Stdio::piped());
    match stdout {
        Stdout::ClosedPipe => {
            cmd.stdout(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            // The reader goes away before anything is written.
            drop(child.stdout.take());
            child.wait_with_output().unwrap()
        }
        Stdout::DevFull => {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            cmd.stdout(Stdio::from(full));
            cmd.spawn().unwrap().wait_with_output().unwrap()
        }
    }
}

fn check(what: &str, out: &Output, stdout: Stdout) {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "{what}: {err}");
    match stdout {
        Stdout::ClosedPipe => {
            assert_eq!(out.status.code(), Some(141), "{what}: {err}");
            assert!(!err.contains("error"), "{what}: {err}");
        }
        Stdout::DevFull => {
            assert_eq!(out.status.code(), Some(1), "{what}: {err}");
            assert!(
                err.contains("cannot write to stdout: No space left on device"),
                "{what}: {err}"
            );
        }
    }
}

fn every_subcommand(stdout: Stdout) {
    let h = Harness::new(vec![
        MockResponse::text("first"),
        MockResponse::text("human"),
        MockResponse::text("json"),
    ]);
    assert!(h.exec(&["first"]).status.success());
    let listed = h.command().args(["list", "--json"]).output().unwrap();
    let thread: serde_json::Value =
        serde_json::from_slice(listed.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    let id = thread["id"].as_str().unwrap().to_string();
    let exec = |json: bool| {
        let mut cmd = h.command();
        cmd.args(["exec", "--skip-git-repo-check", "-s", "danger-full-access"]);
        if json {
            cmd.arg("--json");
        }
        cmd.arg("go");
        cmd
    };
    check("exec", &run(exec(false), stdout), stdout);
    check("exec --json", &run(exec(true), stdout), stdout);
    let cases: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["list", "--json"],
        vec!["fork", &id],
        vec!["archive", &id],
        vec!["unarchive", &id],
        vec!["doctor"],
        vec!["doctor", "--reindex"],
        vec!["debug", "prompt-input", "hello"],
        vec!["delete", "--yes", &id],
    ];
    for args in cases {
        let mut cmd = h.command();
        cmd.args(&args);
        check(&args.join(" "), &run(cmd, stdout), stdout);
    }
}

#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    every_subcommand(Stdout::ClosedPipe);
}

#[test]
fn a_full_stdout_is_a_clear_error_in_every_subcommand() {
    every_subcommand(Stdout::DevFull);
}
