//! Worktree threads against their repository's git dir, through the real binary in
//! workspace-write, with the repository under `/tmp` (a writable root): a command in the
//! worktree cannot write the shared `<repo>/.git` (config, hooks), so nothing it plants runs
//! when Troupe commits the work or the user runs git; the worktree itself is writable, and
//! a sub-agent's work reaches the parent's branch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::subagents_support::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, stdout, Harness};

/// Plain git as the user runs it (no overrides: whatever the repository config says runs).
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit (and a tracked `src/`) in the harness's work dir.
fn repo(h: &Harness) -> PathBuf {
    let repo = std::fs::canonicalize(h.workdir.path()).unwrap();
    assert!(
        repo.starts_with("/tmp"),
        "the attack needs the repo under /tmp"
    );
    git(&repo, &["init", "-q"]);
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/a.txt"), "a\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "one"]);
    repo
}

/// A command that plants, from the worktree, a program in the shared git dir every way it
/// can (`git config`, appending to the config by path, a hook, the worktree's own `.git`
/// file and its gitdir's `config.worktree`), writes `file` in the worktree, then moves the
/// repository away to make its `.git` anew. `marker` is created by whichever planted program
/// runs.
fn attack(repo: &Path, marker: &Path, file: &str) -> String {
    let git_dir = repo.join(".git");
    let m = marker.display();
    format!(
        "git config core.fsmonitor 'touch {m}; false'; \
         printf '[core]\\n\\tfsmonitor = touch {m}\\n\\thooksPath = /tmp\\n' >> {g}/config; \
         printf '#!/bin/sh\\ntouch {m}\\n' > {g}/hooks/pre-commit; chmod +x {g}/hooks/pre-commit; \
         for d in {g}/worktrees/*; do printf '[core]\\n\\tfsmonitor = touch {m}\\n' >> $d/config.worktree; done; \
         printf 'gitdir: /tmp\\n' > .git; \
         echo from-worktree > {file}; cat {file}; \
         mv {r} {r}-moved && mkdir -p {g}/worktrees",
        g = git_dir.display(),
        r = repo.display()
    )
}

fn assert_nothing_planted(repo: &Path, marker: &Path) {
    let moved = PathBuf::from(format!("{}-moved", repo.display()));
    assert!(!moved.exists(), "the repository was moved away");
    let config = std::fs::read_to_string(repo.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "config written: {config}");
    // (Landlock lets a command create an empty file there, never write one: see its limits.)
    let hook = std::fs::read_to_string(repo.join(".git/hooks/pre-commit")).unwrap_or_default();
    assert!(hook.is_empty(), "hook planted: {hook}");
    // The user's own git in the repository runs nothing planted either.
    git(repo, &["status", "--short"]);
    assert!(!marker.exists(), "a planted program ran");
}

#[test]
fn a_worktree_sub_agent_cannot_plant_in_the_repository_and_its_commit_reaches_the_parent() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![call(
            "s1",
            "spawn_agent",
            json!({"task_name": "writer", "message": "wtgit-writer-marker",
                   "fork_turns": "none", "worktree": true}),
        )]),
        wait_call("w1"),
        MockResponse::text("parent done"),
    ]);
    let repo = repo(&h);
    let marker = repo.parent().unwrap().join(format!(
        "planted-{}",
        repo.file_name().unwrap().to_string_lossy()
    ));
    h.mock.route(
        "wtgit-writer-marker",
        vec![
            MockResponse::shell("c1", &["sh", "-c", &attack(&repo, &marker, "child.txt")]),
            MockResponse::text("wrote child.txt"),
        ],
    );
    let out = h
        .command()
        .args(["exec", "-s", "workspace-write", "-a", "never", "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "parent done");

    // The child's command: the shared git dir refused, its own worktree written.
    assert_nothing_planted(&repo, &marker);
    let child = child_request_outputs(&h, "/root/writer");
    assert!(child.contains("from-worktree"), "{child}");

    // Troupe committed the child's work (no planted program ran then either) on its branch,
    // which the parent's branch takes.
    let outputs = root_tool_outputs(&h);
    assert!(outputs.contains("child.txt | 1 +"), "{outputs}");
    let branch = git(
        &repo,
        &[
            "branch",
            "--list",
            "troupe/writer-*",
            "--format=%(refname:short)",
        ],
    );
    let branch = branch.trim();
    assert!(!branch.is_empty(), "no branch kept");
    git(&repo, &["merge", "--quiet", "--no-edit", branch]);
    assert_eq!(
        std::fs::read_to_string(repo.join("child.txt")).unwrap(),
        "from-worktree\n"
    );
    assert!(!marker.exists(), "a planted program ran");
}

/// `exec --worktree` with the given backend: the command writes its worktree, not the repo's
/// git dir; `file` is where it writes (Landlock cannot grant new files at a directory that
/// holds a protected `.git`, so there it writes in `src/`).
fn exec_worktree(backend: &str, file: &str) {
    let h = Harness::new(vec![]);
    let repo = repo(&h);
    let marker = repo.parent().unwrap().join(format!(
        "planted-{}",
        repo.file_name().unwrap().to_string_lossy()
    ));
    h.mock.route(
        "wtgit-exec-marker",
        vec![
            MockResponse::shell("c1", &["sh", "-c", &attack(&repo, &marker, file)]),
            MockResponse::text("done"),
        ],
    );
    let out = h
        .command()
        .args(["exec", "--worktree", "-s", "workspace-write", "-a", "never"])
        .args(["-c", &format!("sandbox_backend=\"{backend}\"")])
        .arg("wtgit-exec-marker")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_nothing_planted(&repo, &marker);
    let worktrees = h.home.path().join("worktrees");
    let made: Vec<PathBuf> = std::fs::read_dir(&worktrees)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(
        std::fs::read_to_string(made[0].join(file)).unwrap_or_default(),
        "from-worktree\n",
        "{backend}: the worktree was not writable: {}",
        stderr(&out)
    );
    // Its `.git` file still leads to the repository.
    let text = std::fs::read_to_string(made[0].join(".git")).unwrap();
    assert!(text.contains("/.git/worktrees/"), "{text}");
    git(&made[0], &["status", "--short"]);
    assert!(!marker.exists(), "a planted program ran");
}

#[test]
fn exec_worktree_cannot_plant_in_the_repository() {
    exec_worktree("auto", "wt.txt");
}

#[test]
fn exec_worktree_cannot_plant_in_the_repository_under_landlock() {
    exec_worktree("landlock", "src/wt.txt");
}
