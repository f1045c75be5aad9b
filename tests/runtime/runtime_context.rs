//! Prompt-cache discipline through the runtime: the history is append-only, so every request's
//! input begins byte for byte with the previous request's input; a settings change mid-thread
//! is appended as a new item, never by rewriting earlier ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::Op;
use troupe_mock_model::{MockModel, MockResponse};
use troupe_test_support::runtime::{is_turn_end, say, settings, until};

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
                    collaboration_mode: None,
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

mod compaction {
    use troupe_actors::runtime::Runtime;
    use troupe_actors::tool_orchestrator::registry::ToolRegistry;
    use troupe_actors::turn::compact::{SUMMARY_PREFIX, SUMMARY_PROMPT};
    use troupe_messages::events::EventMsg;
    use troupe_messages::items::ResponseItem;
    use troupe_messages::mailboxes::SessionMsg;
    use troupe_messages::ops::Op;
    use troupe_messages::settings::SessionSettings;
    use troupe_mock_model::{MockModel, MockResponse};
    use troupe_test_support::runtime::{is_turn_end, say, settings, until};

    fn texts(body: &serde_json::Value) -> Vec<String> {
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                i["content"][0]["text"]
                    .as_str()
                    .unwrap_or(i["type"].as_str().unwrap())
                    .to_string()
            })
            .collect()
    }

    async fn thread_with_limit(
        mock: &MockModel,
        home: &std::path::Path,
        limit: u64,
    ) -> (Runtime, troupe_actors::runtime::ThreadClient) {
        let mut s: SessionSettings = settings(mock, home, home);
        s.context.auto_compact_token_limit = Some(limit);
        let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
            .await
            .unwrap();
        let thread = runtime.start_thread(s).await.unwrap();
        (runtime, thread)
    }

    fn rollout_text(home: &std::path::Path) -> String {
        let mut out = String::new();
        let mut stack = vec![home.join("sessions")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                if entry.path().is_dir() {
                    stack.push(entry.path());
                } else {
                    out.push_str(&std::fs::read_to_string(entry.path()).unwrap());
                }
            }
        }
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mid_turn_compaction_puts_the_summary_before_the_last_user_message() {
        let mock = MockModel::start(vec![
            MockResponse::shell("big", &["sh", "-c", "head -c 8000 /dev/zero | tr '\\0' x"]),
            MockResponse::text("SUMMARY-1"),
            MockResponse::text("done"),
        ])
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let (runtime, mut thread) = thread_with_limit(&mock, home.path(), 800).await;
        thread.submit(say("do it")).unwrap();
        let events = until(&mut thread, is_turn_end).await;
        assert!(
            matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "done"),
            "{events:?}"
        );
        assert!(events.iter().any(|e| matches!(e, EventMsg::ContextCompacted { tokens_before, tokens_after, .. } if tokens_after < tokens_before)));
        assert!(!events
            .iter()
            .any(|e| matches!(e, EventMsg::AgentMessage { message } if message == "SUMMARY-1")));
        let requests = mock.requests();
        assert_eq!(requests.len(), 3);
        let summary_request = &requests[1].body;
        assert_eq!(summary_request["tools"].as_array().unwrap().len(), 0);
        assert_eq!(texts(summary_request).last().unwrap(), SUMMARY_PROMPT);
        let after = texts(&requests[2].body);
        assert_eq!(after.len(), 4, "{after:?}");
        assert!(after[1].starts_with("<environment_context>"));
        assert_eq!(after[2], format!("{SUMMARY_PREFIX}SUMMARY-1"));
        assert_eq!(after[3], "do it");
        assert!(rollout_text(home.path()).contains("\"type\":\"compacted\""));
        runtime.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pre_turn_compaction_keeps_earlier_user_messages_and_the_new_one_last() {
        let long_answer = "a".repeat(4000);
        let mock = MockModel::start(vec![
            MockResponse::text(&long_answer),
            MockResponse::text("SUMMARY-2"),
            MockResponse::text("second"),
        ])
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let (runtime, mut thread) = thread_with_limit(&mock, home.path(), 600).await;
        thread.submit(say("turn one")).unwrap();
        until(&mut thread, is_turn_end).await;
        thread.submit(say("turn two")).unwrap();
        let events = until(&mut thread, is_turn_end).await;
        assert!(
            matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "second"),
            "{events:?}"
        );
        let requests = mock.requests();
        assert_eq!(texts(&requests[1].body).last().unwrap(), SUMMARY_PROMPT);
        let after = texts(&requests[2].body);
        assert_eq!(
            &after[2..],
            [
                "turn one".to_string(),
                format!("{SUMMARY_PREFIX}SUMMARY-2"),
                "turn two".to_string()
            ]
        );
        runtime.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn failed_compaction_ends_the_turn_and_keeps_the_history() {
        let mock = MockModel::start(vec![
            MockResponse::shell("big", &["sh", "-c", "head -c 8000 /dev/zero | tr '\\0' x"]),
            MockResponse::server_error(),
            MockResponse::text("next turn"),
        ])
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let (runtime, mut thread) = thread_with_limit(&mock, home.path(), 800).await;
        thread.submit(say("do it")).unwrap();
        let events = until(&mut thread, is_turn_end).await;
        assert!(
            events.iter().any(|e| matches!(e, EventMsg::Error { error, fatal: true } if error.to_string().contains("compaction failed, history kept"))),
            "{events:?}"
        );
        assert!(matches!(events.last(), Some(EventMsg::TurnAborted { .. })));
        // Nothing was dropped: the session still holds the call and its output.
        let history = thread
            .handle
            .session
            .call(
                |reply| SessionMsg::GetHistory { reply },
                Some(std::time::Duration::from_secs(5)),
            )
            .await
            .unwrap()
            .unwrap();
        assert!(history.iter().any(
            |i| matches!(i, ResponseItem::FunctionCallOutput { call_id, .. } if call_id == "big")
        ));
        assert!(!history
            .iter()
            .any(|i| format!("{i:?}").contains(SUMMARY_PREFIX)));
        runtime.stop();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn manual_compact_summarises_between_turns() {
        let mock = MockModel::start(vec![
            MockResponse::text("first"),
            MockResponse::text("SUMMARY-3"),
            MockResponse::text("after"),
        ])
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let (runtime, mut thread) = thread_with_limit(&mock, home.path(), 1_000_000).await;
        thread.submit(say("hello")).unwrap();
        until(&mut thread, is_turn_end).await;
        thread.submit(Op::Compact).unwrap();
        let events = until(&mut thread, is_turn_end).await;
        assert!(
            events
                .iter()
                .any(|e| matches!(e, EventMsg::ContextCompacted { .. })),
            "{events:?}"
        );
        thread.submit(say("again")).unwrap();
        until(&mut thread, is_turn_end).await;
        let after = texts(&mock.requests()[2].body);
        assert_eq!(
            &after[2..],
            [
                "hello".to_string(),
                format!("{SUMMARY_PREFIX}SUMMARY-3"),
                "again".to_string()
            ]
        );
        assert_eq!(
            mock.requests()[1].body["tools"].as_array().unwrap().len(),
            0
        );
        runtime.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_offers_read_only_tools_and_says_so() {
    use troupe_messages::policy::CollaborationMode;
    let mock = MockModel::start(vec![
        MockResponse::text("did it"),
        MockResponse::text("1. read 2. change"),
        MockResponse::text("doing it"),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut registry = ToolRegistry::with_builtin_tools();
    registry.register(std::sync::Arc::new(WriterTool));
    let runtime = Runtime::start(registry).await.unwrap();
    let mut thread = runtime
        .start_thread(settings(&mock, home.path(), home.path()))
        .await
        .unwrap();
    let set_mode = |mode| Op::OverrideTurnContext {
        model: None,
        approval_policy: None,
        sandbox_mode: None,
        cwd: None,
        collaboration_mode: Some(mode),
    };
    thread.submit(say("one")).unwrap();
    until(&mut thread, is_turn_end).await;
    thread.submit(set_mode(CollaborationMode::Plan)).unwrap();
    thread.submit(say("plan it")).unwrap();
    until(&mut thread, is_turn_end).await;
    thread.submit(set_mode(CollaborationMode::Default)).unwrap();
    thread.submit(say("go")).unwrap();
    until(&mut thread, is_turn_end).await;

    let requests = mock.requests();
    let tool_names = |i: usize| -> Vec<String> {
        requests[i].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let all = [
        "apply_patch",
        "create_goal",
        "get_goal",
        "request_user_input",
        "shell",
        "update_goal",
        "update_plan",
        "view_image",
        "write_things",
    ];
    assert_eq!(tool_names(0), all);
    assert_eq!(
        tool_names(1),
        ["request_user_input", "shell", "update_plan", "view_image"],
        "plan mode hides tools that change things (goals too)"
    );
    assert_eq!(tool_names(2), all);
    let input = requests[1].body["input"].as_array().unwrap();
    let mode_msg = input[input.len() - 2]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        mode_msg.starts_with("<collaboration_mode>plan</collaboration_mode>"),
        "{mode_msg}"
    );
    assert_eq!(input[input.len() - 2]["role"], "developer");
    let input = requests[2].body["input"].as_array().unwrap();
    let back = input[input.len() - 2]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(back.starts_with("<collaboration_mode>default"), "{back}");
    runtime.stop();
}

/// A tool that would change things: hidden in plan mode.
struct WriterTool;

impl troupe_actors::tool_orchestrator::contract::ToolHandler for WriterTool {
    fn spec(&self) -> troupe_messages::tools::ToolSpec {
        troupe_messages::tools::ToolSpec::Function {
            name: "write_things".into(),
            description: "writes".into(),
            strict: false,
            parameters: serde_json::json!({"type": "object"}),
        }
    }
    fn concurrency(&self) -> troupe_actors::tool_orchestrator::contract::Concurrency {
        troupe_actors::tool_orchestrator::contract::Concurrency::Exclusive
    }
    fn handle(
        &self,
        _ctx: troupe_actors::tool_orchestrator::contract::ToolContext,
    ) -> futures::future::BoxFuture<'static, troupe_actors::tool_orchestrator::contract::ToolOutcome>
    {
        Box::pin(async { troupe_actors::tool_orchestrator::contract::ToolOutcome::error("unused") })
    }
}
