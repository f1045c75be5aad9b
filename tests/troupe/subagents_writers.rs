//! Sub-agents that write in worktrees, and the tree's token budget (issue #14), through the
//! real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support as support;

use crate::subagents_support::*;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use support::{stderr, Harness};
use troupe_mock_model::MockResponse;

fn run(h: &Harness, args: &[&str]) -> std::process::Output {
    h.command()
        .args(["exec", "--skip-git-repo-check", "-s", "danger-full-access"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

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

fn worktree_spawn(id: &str, name: &str, task: &str) -> (String, String, String) {
    call(
        id,
        "spawn_agent",
        json!({"task_name": name, "message": task, "fork_turns": "none", "worktree": true}),
    )
}

#[test]
fn a_worktree_childs_branch_is_merged_by_the_parent_and_unmerged_work_is_kept() {
    let merge =
        "git merge --no-edit $(git branch --list 'troupe/writer-*' --format='%(refname:short)')";
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            worktree_spawn("s1", "writer", "wt-writer-marker: write child.txt"),
            worktree_spawn("s2", "keeper", "wt-keeper-marker: write kept.txt"),
        ]),
        wait_call("w1"),
        wait_call("w2"),
        MockResponse::shell("m1", &["sh", "-c", merge]),
        MockResponse::text("merged the writer"),
    ]);
    let repo = h.workdir.path();
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "one"]);
    h.mock.route(
        "wt-writer-marker",
        vec![
            MockResponse::shell("c1", &["sh", "-c", "echo from-child > child.txt"]),
            MockResponse::text("wrote child.txt"),
        ],
    );
    h.mock.route(
        "wt-keeper-marker",
        vec![
            MockResponse::shell("c2", &["sh", "-c", "echo kept > kept.txt"]),
            MockResponse::text("wrote kept.txt"),
        ],
    );
    let out = run(&h, &["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(support::stdout(&out).trim(), "merged the writer");

    // The child worked in its own checkout, not in the parent's directory…
    let child_cwd = child_lines(&h, "/root/writer")
        .iter()
        .find(|l| l["type"] == "turn_context")
        .expect("the writer ran a turn")["payload"]["settings"]["cwd"]
        .as_str()
        .unwrap()
        .to_string();
    let worktrees = h.home.path().join("worktrees");
    assert!(
        child_cwd.starts_with(worktrees.to_str().unwrap()),
        "{child_cwd}"
    );
    // …its final answer named its branch and a diffstat…
    let outputs = root_tool_outputs(&h);
    assert!(outputs.contains("wrote child.txt"), "{outputs}");
    assert!(
        outputs.contains("[worktree] branch `troupe/writer-"),
        "{outputs}"
    );
    assert!(outputs.contains("child.txt | 1 +"), "{outputs}");
    assert!(outputs.contains("kept.txt | 1 +"), "{outputs}");
    // …and the parent merged the branch and sees the child's file.
    assert_eq!(
        std::fs::read_to_string(repo.join("child.txt")).unwrap(),
        "from-child\n"
    );
    assert!(!repo.join("kept.txt").exists());

    // Closed with the root: the merged worktree and its branch are gone; the unmerged one
    // is kept with its commit.
    let branches = git(repo, &["branch", "--list", "troupe/*"]);
    assert!(!branches.contains("troupe/writer-"), "{branches}");
    let kept = branches
        .lines()
        .map(|l| l.trim_start_matches(['*', '+', ' ']).trim())
        .find(|b| b.starts_with("troupe/keeper-"))
        .unwrap_or_else(|| panic!("the unmerged branch was deleted: {branches}"));
    assert!(git(repo, &["show", "--stat", kept]).contains("kept.txt"));
    let left: Vec<String> = std::fs::read_dir(&worktrees)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].contains("keeper"), "{left:?}");
}

#[test]
fn a_worktree_outside_a_git_repository_is_a_tool_error() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![worktree_spawn("s1", "lost", "wt-lost-marker")]),
        MockResponse::tool_calls(vec![call("l1", "list_agents", json!({}))]),
        MockResponse::text("went on"),
    ]);
    let out = run(&h, &["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(support::stdout(&out).trim(), "went on");
    let outputs = root_tool_outputs(&h);
    assert!(
        outputs.contains("cannot give `/root/lost` a worktree")
            && outputs.contains("is not inside a Git repository"),
        "{outputs}"
    );
    // Nothing was started and the name is free again.
    assert!(outputs.contains("{\"agents\":[]}"), "{outputs}");
    assert_eq!(metas(&h).len(), 1);
}

#[test]
fn over_the_token_budget_no_new_work_starts() {
    // Every mock answer reports 100 input tokens and some output: the first child alone
    // takes the tree over a budget of 100.
    let h = Harness::with_config(
        vec![
            MockResponse::tool_calls(vec![spawn_call(
                "s1",
                "first",
                "budget-first-marker",
                "none",
            )]),
            wait_call("w1"),
            MockResponse::tool_calls(vec![
                spawn_call("s2", "second", "budget-second-marker", "none"),
                call(
                    "f1",
                    "followup_task",
                    json!({"target": "first", "message": "more"}),
                ),
                call(
                    "m1",
                    "send_message",
                    json!({"target": "first", "message": "note"}),
                ),
            ]),
            MockResponse::text("stopped at the budget"),
        ],
        "\n[agents]\ntoken_budget = 100\n",
    );
    h.mock.route(
        "budget-first-marker",
        vec![MockResponse::text("first done")],
    );
    h.mock.route(
        "budget-second-marker",
        vec![MockResponse::text("second done")],
    );
    let out = run(&h, &["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(support::stdout(&out).trim(), "stopped at the budget");
    let outputs = support::tool_outputs(&h.mock.requests().last().unwrap().body);
    assert_eq!(outputs.len(), 5, "{outputs:#?}");
    assert!(outputs[0].contains("\"task_name\":\"/root/first\""));
    assert!(outputs[1].contains("first done"), "{}", outputs[1]);
    for (output, what) in [
        (&outputs[2], "cannot spawn `/root/second`"),
        (&outputs[3], "cannot give `first` a follow-up task"),
    ] {
        assert!(
            output.contains(what)
                && output.contains("over its budget of 100 (agents.token_budget)"),
            "{output}"
        );
    }
    // A message starts no work: still delivered.
    assert!(
        outputs[4].contains("message queued for /root/first"),
        "{}",
        outputs[4]
    );
    assert_eq!(metas(&h).len(), 2);
}
