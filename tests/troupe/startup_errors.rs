//! What goes wrong before a thread runs is said once, plainly, with the real cause and the
//! advice that fits it: a full disk, a read-only `TROUPE_HOME`, a thread in use by another
//! troupe, a thread index that cannot be opened, an unusable `base_url`; a full disk at
//! start leaves nothing behind; `troupe doctor` calls a garbage line damage. Some need root
//! (they mount a small tmpfs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::exec_disk_full::{find, SmallDisk};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, stdout, Harness};

/// Runs `troupe exec … go` with `home` as TROUPE_HOME (the harness's config copied there
/// unless it is already).
fn exec_in(h: &Harness, home: &Path, extra: &[&str]) -> Output {
    h.command()
        .env("TROUPE_HOME", home)
        .args(["exec", "--skip-git-repo-check", "-s", "danger-full-access"])
        .args(extra)
        .arg("go")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn assert_said_once_plainly(err: &str) {
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        err.matches("could not start the thread").count(),
        1,
        "{err}"
    );
}

#[test]
fn a_full_disk_at_start_is_said_once_and_leaves_no_rollout_or_lock_however_full() {
    let h = Harness::new(vec![MockResponse::text("never")]);
    // 0 to 8 free pages: the meta line, the lock, the first items each fail in turn.
    for pages in [0usize, 1, 2, 3, 4, 6, 8] {
        let disk = SmallDisk::mount("1m");
        std::fs::copy(
            h.home.path().join("config.toml"),
            disk.path().join("config.toml"),
        )
        .unwrap();
        // The index (sled) is kept off this disk: its own pages would make the count vary.
        std::fs::write(disk.path().join("state"), "").unwrap();
        let spare = disk.path().join("spare");
        std::fs::write(&spare, vec![0u8; pages * 4096]).unwrap();
        disk.fill();
        std::fs::remove_file(&spare).unwrap();
        let out = exec_in(&h, disk.path(), &[]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{pages} pages: {err}");
        assert!(
            err.to_lowercase().contains("no space left"),
            "{pages} pages: {err}"
        );
        assert_said_once_plainly(&err);
        let mut left: Vec<PathBuf> = Vec::new();
        find(&disk.path().join("sessions"), ".jsonl", &mut left);
        find(&disk.path().join("sessions"), ".lock", &mut left);
        assert_eq!(left, Vec::<PathBuf>::new(), "{pages} pages: {err}");
    }
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn a_read_only_home_gives_the_real_cause_and_no_reindex_advice() {
    let h = Harness::new(vec![MockResponse::text("never")]);
    let disk = SmallDisk::mount("1m");
    std::fs::copy(
        h.home.path().join("config.toml"),
        disk.path().join("config.toml"),
    )
    .unwrap();
    let status = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(disk.path())
        .status()
        .unwrap();
    assert!(status.success());
    let out = exec_in(&h, disk.path(), &[]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    assert_said_once_plainly(&err);
    assert!(err.contains("cannot open the thread index"), "{err}");
    assert!(err.contains("writable"), "{err}");
    assert!(!err.contains("damaged"), "{err}");
    assert!(!err.contains("--reindex"), "{err}");
}

#[test]
fn an_index_path_that_is_a_file_says_so_rather_than_damaged() {
    let h = Harness::new(vec![MockResponse::text("ok")]);
    std::fs::write(h.home.path().join("state"), "").unwrap();
    let out = exec_in(&h, h.home.path(), &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("cannot open the thread index"), "{err}");
    assert!(err.contains("must be a directory"), "{err}");
    assert!(
        !err.contains("damaged") && !err.contains("--reindex"),
        "{err}"
    );
}

#[test]
fn a_thread_in_use_by_another_troupe_is_said_once() {
    let h = Harness::new(vec![
        MockResponse::text("first"),
        MockResponse::text("never"),
    ]);
    let out = exec_in(&h, h.home.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rollout = h.rollouts().pop().expect("a rollout");
    let id = troupe_actors::rollout_recorder::loader::load(&rollout)
        .unwrap()
        .meta
        .thread_id
        .to_string();
    // A live process holds the thread.
    let mut holder = Command::new("sleep").arg("30").spawn().unwrap();
    let lock = troupe_actors::rollout_recorder::lock::lock_path(&rollout);
    std::fs::write(&lock, holder.id().to_string()).unwrap();
    let out = h.exec(&["resume", &id, "again"]);
    let _ = holder.kill();
    let _ = holder.wait();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("in use by process {}", holder.id())),
        "{err}"
    );
    assert_said_once_plainly(&err);
}

#[test]
fn an_unusable_base_url_fails_at_start_naming_the_key_without_retrying() {
    let h = Harness::new(vec![MockResponse::text("never")]);
    let config = h.home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let base = h.mock.base_url();
    std::fs::write(&config, text.replace(&base, "not a url")).unwrap();
    let started = Instant::now();
    let out = exec_in(&h, h.home.path(), &[]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("model_providers.mock.base_url"), "{err}");
    assert!(err.contains("not a url"), "{err}");
    assert!(!err.contains("reconnecting"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "{err}");
    assert!(h.rollouts().is_empty(), "a thread was started");
}

#[test]
fn doctor_calls_a_garbage_middle_line_damage_with_its_line_and_what_resume_does() {
    let h = Harness::new(vec![MockResponse::text("one")]);
    let out = exec_in(&h, h.home.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rollout = h.rollouts().pop().expect("a rollout");
    let text = std::fs::read_to_string(&rollout).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "garbage that is not json");
    std::fs::write(&rollout, format!("{}\n", lines.join("\n"))).unwrap();
    let doctor = h.command().arg("doctor").output().unwrap();
    let report = stdout(&doctor);
    assert!(!doctor.status.success(), "{report}");
    assert!(report.contains("problem:"), "{report}");
    assert!(report.contains("line 3 is damaged"), "{report}");
    assert!(report.contains("skips that line"), "{report}");
    assert!(!report.contains("incomplete"), "{report}");
}
