//! `turn/start`'s per-turn overrides, with Codex's semantics: they hold for that turn and the
//! following ones, `null` keeps the thread's, a wider sandbox passes the same checks as a
//! `thread/start` asking for it, and `outputSchema` holds for one turn.

use crate::app_server_support::*;
use serde_json::{json, Value};
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

/// The bodies of the model requests so far.
fn model_bodies(harness: &Harness) -> Vec<Value> {
    harness
        .mock
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/responses"))
        .map(|r| r.body)
        .collect()
}

fn text_input(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_start_overrides_hold_for_this_turn_and_the_following_ones() {
    let harness = harness(vec![
        MockResponse::shell("c1", &["touch", "made.txt"]),
        MockResponse::text("made"),
        MockResponse::text("again"),
    ]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "read-only", "approvalPolicy": "never"}),
        )
        .await;
    // Every override Codex's clients send, most of them explicitly null.
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"], "additionalProperties": false});
    let result = client
        .request(
            "turn/start",
            json!({
                "threadId": thread_id,
                "input": text_input("make the file"),
                "model": "gpt-turn",
                "effort": "high",
                "sandboxPolicy": {"type": "workspaceWrite", "writableRoots": [], "networkAccess": false},
                "approvalPolicy": "never",
                "outputSchema": schema,
                "cwd": null,
                "summary": null,
                "serviceTier": null,
                "personality": null,
                "approvalsReviewer": null,
            }),
        )
        .await;
    assert_eq!(result["turn"]["status"], "inProgress", "{result}");
    client.until_turn_completed(&thread_id).await;
    // The wider sandbox held for the turn's command: read-only would have refused the write.
    assert!(
        harness.workdir.path().join("made.txt").exists(),
        "the command ran under workspace-write"
    );
    client.start_turn(&thread_id, "again").await;
    client.until_turn_completed(&thread_id).await;
    let bodies = model_bodies(&harness);
    assert_eq!(bodies.len(), 3, "{bodies:?}");
    assert_eq!(bodies[0]["model"], "gpt-turn");
    assert_eq!(bodies[0]["reasoning"]["effort"], "high");
    assert_eq!(bodies[0]["text"]["format"]["schema"], schema);
    // The next turn keeps model and effort; the output schema was that turn's only.
    assert_eq!(bodies[2]["model"], "gpt-turn");
    assert_eq!(bodies[2]["reasoning"]["effort"], "high");
    assert!(bodies[2]["text"]["format"].is_null(), "{}", bodies[2]);
    // The thread reports its settings as they now are.
    let resumed = client
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    assert_eq!(resumed["model"], "gpt-turn", "{resumed}");
    assert_eq!(resumed["sandbox"]["type"], "workspaceWrite", "{resumed}");
    assert_eq!(resumed["reasoningEffort"], "high", "{resumed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wider_sandbox_on_turn_start_passes_the_checks_of_a_new_thread() {
    let harness = harness(vec![MockResponse::text("read only")]);
    let system = tempfile::tempdir().unwrap();
    std::fs::write(
        system.path().join("requirements.toml"),
        "allowed_sandbox_modes = [\"read-only\"]\n",
    )
    .unwrap();
    let mut server = start_with_env(
        &harness,
        Transport::Stdio,
        &[],
        &[("TROUPE_SYSTEM_DIR", system.path())],
    )
    .await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "read-only", "approvalPolicy": "never"}),
        )
        .await;
    for policy in [
        json!({"type": "workspaceWrite"}),
        json!({"type": "dangerFullAccess"}),
    ] {
        let error = client
            .request_error(
                "turn/start",
                json!({"threadId": thread_id, "input": text_input("go"), "sandboxPolicy": policy}),
            )
            .await;
        assert!(error.contains("requirements.toml"), "{policy}: {error}");
    }
    // Settings Troupe has no meaning for are refused, not ignored.
    let error = client
        .request_error(
            "turn/start",
            json!({"threadId": thread_id, "input": text_input("go"), "summary": "detailed"}),
        )
        .await;
    assert!(error.contains("summary"), "{error}");
    // The same (or a narrower) policy is applied and the turn runs.
    client
        .request(
            "turn/start",
            json!({"threadId": thread_id, "input": text_input("go"),
                   "sandboxPolicy": {"type": "readOnly"}}),
        )
        .await;
    client.until_turn_completed(&thread_id).await;
    assert_eq!(model_bodies(&harness).len(), 1);
}
