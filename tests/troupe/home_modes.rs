//! In a home the user made with `mkdir` (0755), every file Troupe writes is 0600 and every
//! directory 0700 (rollouts, the index, queue files), while what the agent's commands and
//! patches create in the work tree keeps the user's own mask.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// Every entry under `dir` whose mode is not private: `(path, mode)`.
fn not_private(dir: &Path, skip: &[&Path], found: &mut Vec<(String, u32)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if skip.contains(&path.as_path()) {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let wanted = if meta.is_dir() {
            0o700
        } else if meta.file_type().is_symlink() {
            continue;
        } else {
            0o600
        };
        // A socket or an executable link target may be stricter; never looser.
        if mode(&path) & !wanted != 0 {
            found.push((path.display().to_string(), mode(&path)));
        }
        if meta.is_dir() {
            not_private(&path, skip, found);
        }
    }
}

#[test]
fn every_file_troupe_writes_in_a_0755_home_is_private() {
    let patch = "*** Begin Patch\n*** Add File: sub/added.txt\n+hello\n*** End Patch\n";
    let h = Harness::new(vec![
        MockResponse::shell(
            "c1",
            &["sh", "-c", "mkdir made && echo x > made/by-command"],
        ),
        MockResponse::tool_calls(vec![(
            "p1",
            "apply_patch",
            json!({ "input": patch }).to_string(),
        )]),
        MockResponse::text("done"),
    ]);
    let home = h.home.path();
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "-a",
            "never",
            "-c",
            "apply_patch_tool_type=\"function\"",
            "-o",
            "last-message.txt",
            "go",
        ])
        .env("OPENAI_API_KEY", "unused")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // A queue file for the thread, written by another troupe process.
    let rollout = h.rollouts().pop().unwrap();
    let name = rollout.file_stem().unwrap().to_string_lossy().to_string();
    let id = &name[name.len() - 36..];
    let out = h
        .command()
        .args(["queue", "--thread", id, "--message", "later"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let config = home.join("config.toml");
    let mut loose = Vec::new();
    not_private(home, &[config.as_path()], &mut loose);
    assert_eq!(loose, Vec::<(String, u32)>::new());
    assert!(home.join("sessions").is_dir(), "a rollout was written");
    let files: usize = walk_count(home);
    assert!(files > 3, "the home holds Troupe's files ({files})");

    // The work tree keeps the user's mask (this test's, 022 unless changed).
    // SAFETY: reading the mask back restores it at once; this thread only.
    let user = unsafe {
        let mask = libc::umask(0o022);
        libc::umask(mask);
        mask
    } as u32;
    let work = h.workdir.path();
    assert_eq!(mode(&work.join("made")), 0o777 & !user);
    assert_eq!(mode(&work.join("made/by-command")), 0o666 & !user);
    assert_eq!(mode(&work.join("sub")), 0o777 & !user);
    assert_eq!(mode(&work.join("sub/added.txt")), 0o666 & !user);
    assert_eq!(mode(&work.join("last-message.txt")), 0o666 & !user);
}

fn walk_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            if e.path().is_dir() && !e.file_type().unwrap().is_symlink() {
                1 + walk_count(&e.path())
            } else {
                1
            }
        })
        .sum()
}
