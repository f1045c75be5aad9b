//! `troupe review` and `troupe exec review` through the real binary against the mock model:
//! the request (review instructions, the target's message, read-only sandbox), the review
//! printed for people, as Codex's `--json` stream and as a structured object, and bad targets
//! refused before any request.

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, stdout, Harness};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// A repository with one commit on `main`, a second on `feature`, and an uncommitted edit.
fn repo(h: &Harness) -> (String, String) {
    let dir = h.workdir.path();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\ntwo\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "init"]);
    let main = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["checkout", "-qb", "feature"]);
    std::fs::write(dir.join("b.txt"), "new\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "feature work"]);
    let feature = git(dir, &["rev-parse", "HEAD"]);
    std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    (main, feature)
}

fn review_json(h: &Harness) -> Value {
    let file = h.workdir.path().join("a.txt").display().to_string();
    json!({
        "findings": [
            {"title": "[P1] Off-by-one in loop", "body": "The loop skips the last element.",
             "confidence_score": 0.8, "priority": 1,
             "code_location": {"absolute_file_path": file, "line_range": {"start": 2, "end": 3}}}
        ],
        "overall_correctness": "patch is incorrect",
        "overall_explanation": "One bug.",
        "overall_confidence_score": 0.7
    })
}

fn rendered(h: &Harness) -> String {
    format!(
        "One bug.\n\nReview comment:\n\n- [P1] Off-by-one in loop — {}:2-3\n  The loop skips the last element.",
        h.workdir.path().join("a.txt").display()
    )
}

fn troupe(h: &Harness, args: &[&str]) -> Output {
    h.command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn last_user_text(body: &Value) -> String {
    let input = body["input"].as_array().unwrap();
    let last = input.iter().rev().find(|i| i["role"] == "user").unwrap();
    last["content"][0]["text"].as_str().unwrap().to_string()
}

fn request_text(body: &Value) -> String {
    body.to_string()
}

#[test]
fn review_of_uncommitted_changes_prints_the_rendered_review() {
    let h = Harness::new(vec![]);
    repo(&h);
    h.mock
        .push(MockResponse::text(&review_json(&h).to_string()));
    let out = troupe(&h, &["review"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim_end(), rendered(&h));
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    let instructions = body["instructions"].as_str().unwrap();
    assert!(instructions.starts_with("# Code review"), "{instructions}");
    assert!(instructions
        .contains("\"overall_correctness\": \"patch is correct\" | \"patch is incorrect\""));
    assert_eq!(
        last_user_text(body),
        "Review the current code changes (staged, unstaged, and untracked files) and provide \
         prioritized findings."
    );
    // Read-only by default, even though nothing in the config asked for it.
    assert!(request_text(body).contains("The sandbox only permits reading files"));
    assert!(stderr(&out).contains("current changes"), "{}", stderr(&out));
}

#[test]
fn exec_review_of_a_commit_streams_codex_events() {
    let h = Harness::new(vec![]);
    let (_, feature) = repo(&h);
    h.mock
        .push(MockResponse::text(&review_json(&h).to_string()));
    let out = troupe(
        &h,
        &[
            "exec", "review", "--commit", "HEAD", "--title", "Feature", "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let events = json_lines(&out);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "turn.completed"
        ]
    );
    assert_eq!(events[2]["item"]["type"], "agent_message");
    assert_eq!(events[2]["item"]["text"], rendered(&h));
    assert_eq!(
        last_user_text(&h.mock.requests()[0].body),
        format!(
            "Review the code changes introduced by commit {feature} (\"Feature\"). Provide \
             prioritized, actionable findings."
        )
    );
}

#[test]
fn review_json_prints_the_structured_review_against_a_base_branch() {
    let h = Harness::new(vec![]);
    let (main, _) = repo(&h);
    let review = review_json(&h);
    h.mock
        .push(MockResponse::text(&format!("```json\n{review}\n```")));
    let out = troupe(&h, &["review", "--base", "main", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(printed, review);
    let text = last_user_text(&h.mock.requests()[0].body);
    assert!(text.contains(&format!("Run `git diff {main}`")), "{text}");
    assert!(text.starts_with("Review the code changes against the base branch 'main'."));
}

#[test]
fn custom_instructions_alone_are_the_request_and_a_sandbox_flag_wins() {
    let h = Harness::new(vec![]);
    repo(&h);
    h.mock
        .push(MockResponse::text(&review_json(&h).to_string()));
    let out = troupe(
        &h,
        &[
            "exec",
            "review",
            "-s",
            "workspace-write",
            "Look only at a.txt",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &h.mock.requests()[0].body;
    assert_eq!(last_user_text(body), "Look only at a.txt");
    assert!(!request_text(body).contains("The sandbox only permits reading files"));
}

#[test]
fn an_answer_that_is_not_a_review_is_shown_or_refused() {
    let h = Harness::new(vec![
        MockResponse::text("no idea"),
        MockResponse::text("no idea"),
    ]);
    repo(&h);
    let out = troupe(&h, &["review"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "no idea");
    assert!(
        stderr(&out).contains("not in the review format"),
        "{}",
        stderr(&out)
    );
    // A script asked for the structure: no structure is a failure.
    let out = troupe(&h, &["review", "--json"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("the model's answer is not a review"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn bad_targets_fail_before_any_request() {
    let h = Harness::new(vec![]);
    // Not a repository yet.
    let out = troupe(&h, &["review"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is not inside a Git repository"),
        "{}",
        stderr(&out)
    );
    repo(&h);
    for (args, expected) in [
        (
            vec!["review", "--base", "nosuch"],
            "--base nosuch: no such branch",
        ),
        (
            vec!["exec", "review", "--commit", "deadbeef"],
            "--commit deadbeef: not a commit",
        ),
        (
            vec!["review", "--commit=--upload-pack=x"],
            "not a branch or commit name",
        ),
    ] {
        let out = troupe(&h, &args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("panicked"));
    }
    let out = troupe(&h, &["review", "--uncommitted", "--base", "main"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    assert_eq!(h.mock.request_count(), 0);
}
