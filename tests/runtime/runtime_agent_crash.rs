//! A sub-agent whose session dies abnormally (its actor killed mid-turn, as a panic in its
//! handler would end it): the child ends `failed` with its error as its final answer, and its
//! parent and sibling go on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::future::BoxFuture;
use serde_json::json;
use std::sync::Arc;
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::contract::{
    Concurrency, ToolContext, ToolHandler, ToolOutcome,
};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::tools::ToolSpec;
use troupe_mock_model::{MockModel, MockResponse};
use troupe_test_support::runtime::{is_turn_end, say, settings, until};

/// The test's hook: the calling thread's session actor dies on the spot (no shutdown, no
/// `ShutdownComplete`), the way a crash ends it.
struct CrashSessionTool;

impl ToolHandler for CrashSessionTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "crash_session".into(),
            description: "kills the caller's session actor".into(),
            strict: false,
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }
    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            ctx.session.kill();
            std::future::pending().await
        })
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> (String, String, String) {
    (id.to_string(), name.to_string(), args.to_string())
}

fn wait(id: &str) -> MockResponse {
    MockResponse::tool_calls(vec![call(id, "wait_agent", json!({"timeout_ms": 10000}))])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_child_ends_failed_and_its_parent_and_sibling_go_on() {
    let spawn = |id: &str, name: &str, task: &str| {
        call(
            id,
            "spawn_agent",
            json!({"task_name": name, "message": task, "fork_turns": "none"}),
        )
    };
    let mock = MockModel::start(vec![
        MockResponse::tool_calls(vec![
            spawn("s1", "bad", "crash-marker"),
            spawn("s2", "good", "fine-marker"),
        ]),
        wait("w1"),
        wait("w2"),
        MockResponse::text("one crashed"),
        MockResponse::text("root still here"),
    ])
    .await
    .unwrap();
    mock.route(
        "crash-marker",
        vec![MockResponse::tool_calls(vec![call(
            "c1",
            "crash_session",
            json!({}),
        )])],
    );
    mock.route("fine-marker", vec![MockResponse::text("good done")]);
    let home = tempfile::tempdir().unwrap();
    let mut registry = ToolRegistry::with_builtin_tools();
    registry.register(Arc::new(CrashSessionTool));
    let runtime = Runtime::start(registry).await.unwrap();
    let mut root_settings = settings(&mock, home.path(), home.path());
    root_settings.agents.enabled = true;
    let mut root = runtime.start_thread(root_settings).await.unwrap();
    root.submit(say("split the work")).unwrap();
    let events = until(&mut root, is_turn_end).await;
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "one crashed"),
        "{events:?}"
    );
    // What the root's waits reported: the crashed child failed with its error as its final
    // answer; the sibling finished.
    let last_root_request = mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("split the work"))
        .unwrap();
    let outputs: String = last_root_request.body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].to_string())
        .collect();
    assert!(outputs.contains("/root/bad"), "{outputs}");
    assert!(outputs.contains("failed"), "{outputs}");
    assert!(outputs.contains("stopped unexpectedly"), "{outputs}");
    assert!(outputs.contains("good done"), "{outputs}");

    root.submit(say("still there?")).unwrap();
    let events = until(&mut root, is_turn_end).await;
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "root still here"),
        "{events:?}"
    );
    runtime.stop();
}
