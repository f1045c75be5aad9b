//! Limits through the runtime: input typed during a turn that could never fit is refused
//! (not queued, never sent), and settings that skip config validation still cannot loop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_mock_model::{MockModel, MockResponse};
use troupe_test_support::runtime::{is_turn_end, say, settings, until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_typed_during_a_turn_that_cannot_fit_is_refused() {
    let mock = MockModel::start(vec![
        MockResponse::shell("slow", &["sleep", "1"]),
        MockResponse::text("done"),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut s = settings(&mock, home.path(), home.path());
    s.context.model_context_window = Some(10_000);
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let mut thread = runtime.start_thread(s).await.unwrap();
    thread.submit(say("go")).unwrap();
    until(&mut thread, |e| {
        matches!(e, EventMsg::ExecCommandBegin { .. })
    })
    .await;
    thread.submit(say(&"q".repeat(100_000))).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            EventMsg::Error { error, fatal: false }
                if error.to_string().contains("the message is too large: about 25")
                    && error.to_string().contains("(100000 bytes)")
        )),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { .. })),
        "{events:?}"
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[1].body.to_string().contains("qqqq"));
    runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_of_one_from_the_api_fails_the_turn_without_a_request() {
    let mock = MockModel::start(vec![MockResponse::text("unused")])
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut s = settings(&mock, home.path(), home.path());
    s.context.model_context_window = Some(1);
    s.context.auto_compact_token_limit = Some(0);
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let mut thread = runtime.start_thread(s).await.unwrap();
    thread.submit(say("go")).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            EventMsg::Error { error, fatal: true }
                if error.to_string().contains("the initial context alone")
        )),
        "{events:?}"
    );
    assert!(matches!(events.last(), Some(EventMsg::TurnAborted { .. })));
    assert_eq!(mock.request_count(), 0);
    runtime.stop();
}
