#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn tracked_and_untracked_changes_are_both_in_the_diff() {
    let dir = tempfile::tempdir().expect("dir");
    git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join("kept.txt"), "one\n").expect("write");
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-qm", "first"]);
    assert_eq!(work_tree_diff(dir.path()).expect("diff"), "");
    std::fs::write(dir.path().join("kept.txt"), "two\n").expect("write");
    std::fs::write(dir.path().join("fresh.txt"), "new file\n").expect("write");
    let diff = work_tree_diff(dir.path()).expect("diff");
    assert!(diff.contains("diff --git a/kept.txt b/kept.txt"), "{diff}");
    assert!(diff.contains("-one\n+two"), "{diff}");
    assert!(diff.contains("b/fresh.txt"), "{diff}");
    assert!(diff.contains("+new file"), "{diff}");
}

#[test]
fn a_repository_without_commits_and_a_plain_folder() {
    let dir = tempfile::tempdir().expect("dir");
    let err = work_tree_diff(dir.path()).expect_err("not a repository");
    assert!(err.contains("not inside a Git repository"), "{err}");
    git(dir.path(), &["init", "-q"]);
    std::fs::write(dir.path().join("a.txt"), "staged\n").expect("write");
    git(dir.path(), &["add", "a.txt"]);
    let diff = work_tree_diff(dir.path()).expect("diff");
    assert!(diff.contains("+staged"), "{diff}");
}
