//! `review/start` on `troupe app-server` over stdio, against the mock model: the review turn
//! runs on the supplied thread, the answer is Codex's `{reviewThreadId, turn}`, and bad
//! targets are errors before any request.

use crate::app_server_support::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use troupe_mock_model::MockResponse;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
}

fn user_texts(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["role"] == "user")
        .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["text"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_start_runs_a_review_turn_on_the_thread() {
    let review = json!({"findings": [], "overall_correctness": "patch is correct",
                        "overall_explanation": "Fine.", "overall_confidence_score": 0.9});
    let harness = harness(vec![MockResponse::text(&review.to_string())]);
    let work = harness.workdir.path();
    git(work, &["init", "-q"]);
    std::fs::write(work.join("a.txt"), "one\n").unwrap();
    git(work, &["add", "."]);
    git(work, &["commit", "-qm", "init"]);
    std::fs::write(work.join("a.txt"), "two\n").unwrap();

    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(work, json!({"approvalPolicy": "never"}))
        .await;

    // Bad targets and deliveries: errors, nothing sent to the model.
    let message = client
        .request_error(
            "review/start",
            json!({"threadId": thread_id, "target": {"type": "baseBranch", "branch": "nosuch"}}),
        )
        .await;
    assert!(message.contains("no such branch"), "{message}");
    let message = client
        .request_error(
            "review/start",
            json!({"threadId": thread_id, "target": {"type": "commit", "sha": "deadbeef"}}),
        )
        .await;
    assert!(message.contains("not a commit"), "{message}");
    let message = client
        .request_error(
            "review/start",
            json!({"threadId": thread_id, "target": {"type": "uncommittedChanges"}, "delivery": "detached"}),
        )
        .await;
    assert!(message.contains("detached"), "{message}");
    assert_eq!(harness.mock.request_count(), 0);

    let result = client
        .request(
            "review/start",
            json!({"threadId": thread_id, "target": {"type": "uncommittedChanges"}}),
        )
        .await;
    assert_eq!(result["reviewThreadId"], json!(thread_id), "{result}");
    let turn_id = result["turn"]["id"].as_str().expect("turn id").to_string();
    let seen = client.until_turn_completed(&thread_id).await;
    let last = seen.last().expect("turn/completed");
    assert_eq!(last["params"]["turn"]["id"], json!(turn_id));
    assert!(
        seen.iter()
            .any(|m| m.to_string().contains("patch is correct")),
        "the review answer reaches the client: {seen:?}"
    );

    let requests = harness.mock.requests();
    assert_eq!(requests.len(), 1);
    let texts = user_texts(&requests[0].body);
    assert!(
        texts.iter().any(|t| t.starts_with("# Code review")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t
        == "Review the current code changes (staged, unstaged, and untracked files) and provide \
            prioritized findings."));
}
