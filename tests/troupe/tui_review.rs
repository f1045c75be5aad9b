//! `/diff` on a turn that changed nothing shows the work tree's diff (tracked and untracked),
//! and `/review` reviews the uncommitted changes as a turn whose answer is shown rendered.

use crate::tui_tmux::Tmux;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}");
}

/// A repository with `tracked.txt` committed then edited, and an untracked `fresh.txt` of
/// 60 lines.
fn dirty_repo(dir: &Path) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("tracked.txt"), "old line\n").expect("write");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "init"]);
    std::fs::write(dir.join("tracked.txt"), "new line\n").expect("write");
    let fresh: String = (1..=60).map(|i| format!("fresh line {i}\n")).collect();
    std::fs::write(dir.join("fresh.txt"), fresh).expect("write");
}

#[test]
fn diff_without_a_turn_shows_the_work_trees_tracked_and_untracked_changes() {
    let h = Harness::new(vec![]);
    dirty_repo(h.workdir.path());
    let tmux = Tmux::start(&h, "diff-worktree", &[]);
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("/diff");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_on_screen("work tree diff (tracked and untracked)");
    assert!(screen.contains("fresh.txt"), "{screen}");
    assert!(!screen.contains("no changes in this turn"), "{screen}");
    // Scrollable: the untracked file's last lines come into view, the tracked file's edit
    // is there before it.
    for _ in 0..8 {
        tmux.keys(&["PageDown"]);
    }
    tmux.wait_on_screen("+fresh line 60");
    for _ in 0..10 {
        tmux.keys(&["PageUp"]);
    }
    let screen = tmux.wait_on_screen("+new line");
    assert!(screen.contains("-old line"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_on_screen("Ask troupe to do something");
    // A clean tree says so.
    git(h.workdir.path(), &["add", "."]);
    git(h.workdir.path(), &["commit", "-qm", "all"]);
    tmux.type_text("/diff");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the work tree is clean");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn review_sends_the_review_request_and_shows_the_findings_rendered() {
    let h = Harness::new(vec![]);
    dirty_repo(h.workdir.path());
    let file = h.workdir.path().join("tracked.txt").display().to_string();
    let review = json!({
        "findings": [{
            "title": "[P1] The new line drops the old behaviour",
            "body": "Callers reading `old line` now get nothing.",
            "confidence_score": 0.8, "priority": 1,
            "code_location": {"absolute_file_path": file, "line_range": {"start": 1, "end": 1}}
        }],
        "overall_correctness": "patch is incorrect",
        "overall_explanation": "One regression.",
        "overall_confidence_score": 0.7
    });
    h.mock.push(MockResponse::text(&review.to_string()));
    let tmux = Tmux::start(&h, "review", &[]);
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("/review");
    tmux.keys(&["Enter"]);
    tmux.wait_for("reviewing current changes");
    let seen = tmux.wait_for("turn complete");
    assert!(
        seen.contains("[P1] The new line drops the old behaviour"),
        "{seen}"
    );
    assert!(seen.contains("tracked.txt:1-1"), "{seen}");
    assert!(seen.contains("patch is incorrect"), "{seen}");
    // The JSON itself never reaches the screen.
    assert!(!seen.contains("\"findings\""), "{seen}");
    assert!(!seen.contains("confidence_score"), "{seen}");
    let body = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.method == "POST")
        .expect("a model request")
        .body
        .to_string();
    assert!(body.contains("# Code review"), "{body}");
    assert!(body.contains("staged, unstaged, and untracked"), "{body}");
    // A bad target is refused before any request.
    let requests = h.mock.requests().len();
    tmux.type_text("/review base no-such-branch");
    tmux.keys(&["Enter"]);
    tmux.wait_for("cannot review: no such branch");
    assert_eq!(h.mock.requests().len(), requests);
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
