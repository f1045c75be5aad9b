//! Prompt-cache discipline through the runtime: the history is append-only, so every request's
//! input begins byte for byte with the previous request's input; a settings change mid-thread
//! is appended as a new item, never by rewriting earlier ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/runtime.rs"]
mod runtime_support;

use runtime_support::{is_turn_end, say, settings, until};
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::Op;
use troupe_mock_model::{MockModel, MockResponse};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_turns_with_a_model_change_keep_a_byte_stable_prefix() {
    let mock = MockModel::start(vec![
        MockResponse::text("one"),
        MockResponse::shell("c1", &["echo", "tool"]),
        MockResponse::text("two"),
        MockResponse::text("three"),
        MockResponse::text("four"),
        MockResponse::text("five"),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let mut thread = runtime
        .start_thread(settings(&mock, home.path(), home.path()))
        .await
        .unwrap();
    for turn in 1..=5 {
        if turn == 3 {
            thread
                .submit(Op::OverrideTurnContext {
                    model: Some("other-model".into()),
                    approval_policy: None,
                    sandbox_mode: None,
                    cwd: None,
                })
                .unwrap();
        }
        thread.submit(say(&format!("turn {turn}"))).unwrap();
        let events = until(&mut thread, is_turn_end).await;
        assert!(
            matches!(events.last(), Some(EventMsg::TurnComplete { .. })),
            "{events:?}"
        );
    }
    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    for pair in requests.windows(2) {
        let before = serde_json::to_string(&pair[0].body["input"]).unwrap();
        let after = serde_json::to_string(&pair[1].body["input"]).unwrap();
        assert!(
            after.starts_with(&before[..before.len() - 1]),
            "input was rewritten:\nbefore {before}\nafter  {after}"
        );
        assert_eq!(pair[0].body["instructions"], pair[1].body["instructions"]);
        assert_eq!(pair[0].body["tools"], pair[1].body["tools"]);
    }
    // Turn 3 runs on the new model and is told so by an appended item before its input.
    assert_eq!(requests[2].body["model"], "mock-model");
    assert_eq!(requests[3].body["model"], "other-model");
    let input = requests[3].body["input"].as_array().unwrap();
    let update = input[input.len() - 2]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(update.starts_with("<environment_context>"), "{update}");
    assert!(
        update.contains("The model is now `other-model` (was `mock-model`)"),
        "{update}"
    );
    assert_eq!(input[input.len() - 1]["content"][0]["text"], "turn 3");
    // Only once: turn 4 adds no second update.
    let input4 = requests[4].body["input"].as_array().unwrap();
    let updates = input4
        .iter()
        .filter(|i| {
            i["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("<model_switch>"))
        })
        .count();
    assert_eq!(updates, 1);
    runtime.stop();
}
