//! Inputs that used to hang or be accepted silently: FIFOs where files belong, `--cd` to a
//! file, an unknown `shell_environment_policy.inherit`, `apply` in a missing directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

/// Waits at most 20 s: a hang is a failure, not a stuck test run.
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("hung: {}", stderr(&child.wait_with_output().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn spawn(h: &Harness, args: &[&str]) -> Child {
    h.command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_fifo_as_config_toml_is_an_error_naming_it() {
    let h = Harness::new(vec![MockResponse::text("never")]);
    let config = h.home.path().join("config.toml");
    std::fs::remove_file(&config).unwrap();
    mkfifo(&config);
    let out = finish(spawn(
        &h,
        &[
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
            "x",
        ],
    ));
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains(&config.display().to_string()) && err.contains("FIFO"),
        "{err}"
    );
}

#[test]
fn a_fifo_named_like_a_rollout_does_not_hang_list_or_doctor() {
    let h = Harness::new(vec![MockResponse::text("ok")]);
    assert!(h.exec(&["x"]).status.success());
    let day = h.rollouts()[0].parent().unwrap().to_path_buf();
    let fifo = day.join("rollout-2026-01-01T00-00-00-00000000-0000-0000-0000-000000000000.jsonl");
    mkfifo(&fifo);
    let name = fifo.display().to_string();
    let list = finish(spawn(&h, &["list"]));
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(stderr(&list).contains(&name) && stderr(&list).contains("FIFO"));
    let doctor = finish(spawn(&h, &["doctor"]));
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("FIFO"));
    let reindex = finish(spawn(&h, &["doctor", "--reindex"]));
    let report = String::from_utf8_lossy(&reindex.stdout).into_owned();
    assert!(!reindex.status.success());
    assert!(
        report.contains(&name) && report.contains("FIFO"),
        "{report}"
    );
    // A FIFO named like a rollout's lock must not hang either.
    std::fs::remove_file(&fifo).unwrap();
    let lock = format!("{}.lock", h.rollouts()[0].display());
    mkfifo(Path::new(&lock));
    let list = finish(spawn(&h, &["list"]));
    assert!(list.status.success(), "{}", stderr(&list));
}

#[test]
fn cd_to_a_file_is_an_error() {
    let h = Harness::new(vec![MockResponse::text("never")]);
    let file = h.workdir.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let out = h.exec(&["--cd", file.to_str().unwrap(), "x"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not a directory"), "{}", stderr(&out));
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn an_unknown_inherit_value_is_a_config_error() {
    let h = Harness::new(vec![MockResponse::text("never")]);
    let config = h.home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[shell_environment_policy]\ninherit = \"bogus\"\n");
    std::fs::write(&config, text).unwrap();
    let out = h.exec(&["x"]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("config.toml:") && err.contains("shell_environment_policy.inherit"),
        "{err}"
    );
    assert!(err.contains("bogus"), "{err}");
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn apply_in_a_missing_directory_names_it() {
    let h = Harness::new(vec![]);
    let rollout = h.workdir.path().join("r.jsonl");
    let diff = "diff --git a/a b/a\\n";
    std::fs::write(
        &rollout,
        format!(
            "{{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"type\":\"event\",\"payload\":{{\"type\":\"turn_diff\",\"unified_diff\":\"{diff}\"}}}}\n"
        ),
    )
    .unwrap();
    let missing = h.workdir.path().join("gone");
    let out = h
        .command()
        .args(["apply", "--rollout"])
        .arg(&rollout)
        .arg("--cd")
        .arg(&missing)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(!err.contains("is git installed"), "{err}");
}
