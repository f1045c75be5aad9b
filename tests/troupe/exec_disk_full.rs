//! A full disk under `TROUPE_HOME`: the turn stops at once with every executed tool call
//! recorded, the error names the file and the cause, the exit status is non-zero, and the
//! rollout is valid JSONL. Needs root (it mounts a small tmpfs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

/// A small tmpfs, unmounted on drop.
pub(crate) struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    pub(crate) fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("run mount");
        assert!(status.success(), "mounting a tmpfs needs root");
        Self { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Takes every free byte.
    pub(crate) fn fill(&self) {
        let _ = std::fs::write(self.path().join("filler"), vec![0u8; 64 << 20]);
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn shell_script(call_id: &str, script: &str) -> MockResponse {
    let args = json!({ "command": ["sh", "-c", script] }).to_string();
    MockResponse::tool_calls(vec![(call_id, "shell", args)])
}

pub(crate) fn find(dir: &Path, suffix: &str, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            find(&path, suffix, found);
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
}

/// Runs exec with `home` as TROUPE_HOME (the harness's config copied there).
fn exec_in(h: &Harness, home: &Path) -> std::process::Output {
    std::fs::copy(h.home.path().join("config.toml"), home.join("config.toml")).unwrap();
    h.command()
        .env("TROUPE_HOME", home)
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
            "go",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_disk_filling_mid_run_stops_the_turn_with_every_executed_call_recorded() {
    let disk = SmallDisk::mount("4m");
    let scratch = tempfile::tempdir().unwrap();
    let ran = scratch.path().join("ran");
    let filler = disk.path().join("filler");
    let mut script = vec![
        shell_script("c1", &format!("echo c1 >> {}", ran.display())),
        shell_script(
            "c2",
            &format!(
                "echo c2 >> {}; head -c 64M /dev/zero > {} 2>/dev/null; echo filled",
                ran.display(),
                filler.display()
            ),
        ),
    ];
    // What a model would go on asking for, if it were asked.
    for n in 3..=16 {
        script.push(shell_script(
            &format!("c{n}"),
            &format!("echo c{n} >> {}", ran.display()),
        ));
    }
    script.push(MockResponse::text("done"));
    let h = Harness::new(script);
    // The thread index (sled) frees and takes pages of its own as it likes: kept off this
    // disk (a file where its directory would be), so what fills the disk is the test alone.
    std::fs::write(disk.path().join("state"), "").unwrap();
    let out = exec_in(&h, disk.path());
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "exit 0 on a full disk; stderr: {err}"
    );
    let mut rollouts = Vec::new();
    find(&disk.path().join("sessions"), ".jsonl", &mut rollouts);
    assert_eq!(rollouts.len(), 1, "{rollouts:?}");
    let rollout = &rollouts[0];
    assert!(
        err.contains("no space left") && err.contains(&rollout.display().to_string()),
        "{err}"
    );
    // No request after the failure, so nothing ran after it.
    assert_eq!(h.mock.request_count(), 2, "{err}");
    let executed: Vec<String> = std::fs::read_to_string(&ran)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(executed, ["c1", "c2"]);
    // Valid JSONL to the last byte, holding every executed call and its output.
    let text = std::fs::read_to_string(rollout).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn line {l}: {e}")))
        .collect();
    for call in &executed {
        for kind in ["function_call", "function_call_output"] {
            assert!(
                lines.iter().any(|l| l["type"] == "response_item"
                    && l["payload"]["type"] == kind
                    && l["payload"]["call_id"] == call.as_str()),
                "{kind} {call} missing from the rollout"
            );
        }
    }
    let mut locks = Vec::new();
    find(disk.path(), ".lock", &mut locks);
    assert_eq!(locks, Vec::<PathBuf>::new());
}

#[test]
fn a_full_disk_at_start_leaves_no_empty_rollout_or_lock() {
    let disk = SmallDisk::mount("1m");
    let h = Harness::new(vec![MockResponse::text("never")]);
    std::fs::copy(
        h.home.path().join("config.toml"),
        disk.path().join("config.toml"),
    )
    .unwrap();
    std::fs::create_dir_all(disk.path().join("sessions")).unwrap();
    disk.fill();
    let out = exec_in(&h, disk.path());
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no space left"), "{err}");
    let mut left = Vec::new();
    find(&disk.path().join("sessions"), ".jsonl", &mut left);
    find(&disk.path().join("sessions"), ".lock", &mut left);
    assert_eq!(left, Vec::<PathBuf>::new());
    assert_eq!(h.mock.request_count(), 0);
}
