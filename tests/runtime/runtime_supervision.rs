//! The actor tree under stress, driven through the runtime API against the mock model:
//! a panicking tool, input typed while a turn runs, and an interrupt that must leave no
//! process behind — the session survives all of them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::future::BoxFuture;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::contract::{
    Concurrency, ToolContext, ToolHandler, ToolOutcome,
};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::tools::ToolSpec;
use troupe_mock_model::{MockModel, MockResponse};
use troupe_test_support::runtime::{interrupt, is_turn_end, say, settings, until};

struct ExplodingTool;

impl ToolHandler for ExplodingTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "explode".into(),
            description: "panics".into(),
            strict: false,
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }
    fn handle(&self, _ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async { panic!("boom") })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tool_becomes_an_error_output_and_the_session_goes_on() {
    let mock = MockModel::start(vec![
        MockResponse::tool_calls(vec![("x1", "explode", "{}")]),
        MockResponse::text("after the crash"),
        MockResponse::text("second turn"),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut registry = ToolRegistry::with_builtin_tools();
    registry.register(Arc::new(ExplodingTool));
    let runtime = Runtime::start(registry).await.unwrap();
    let mut thread = runtime
        .start_thread(settings(&mock, home.path(), home.path()))
        .await
        .unwrap();
    thread.submit(say("explode please")).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        events.iter().any(|e| matches!(e, EventMsg::Warning { message } if message == "tool `explode` crashed: boom")),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "after the crash")
    );
    let requests = mock.requests();
    let output = requests[1].body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap()
        .clone();
    assert_eq!(output["output"], "tool `explode` crashed: boom");

    thread.submit(say("still there?")).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "second turn")
    );
    runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_typed_during_a_turn_joins_it_at_the_next_sampling() {
    let mock = MockModel::start(vec![
        MockResponse::shell("s1", &["sleep", "1"]),
        MockResponse::text("saw your note"),
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
    thread.submit(say("first")).unwrap();
    until(&mut thread, |e| {
        matches!(e, EventMsg::ExecCommandBegin { .. })
    })
    .await;
    thread.submit(say("also do this")).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { .. })),
        "{events:?}"
    );
    let started = events
        .iter()
        .filter(|e| matches!(e, EventMsg::TurnStarted { .. }))
        .count();
    assert_eq!(started, 0, "the note must not start a second turn");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let input = requests[1].body["input"].as_array().unwrap();
    let texts: Vec<&str> = input
        .iter()
        .filter(|i| i["role"] == "user")
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .filter(|t| !t.starts_with("<environment_context>"))
        .collect();
    assert_eq!(
        texts,
        ["first", "also do this"],
        "injected exactly once, in order"
    );
    assert_eq!(
        input.last().unwrap()["role"],
        "user",
        "the note follows the tool output"
    );
    runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_kills_the_running_command_and_the_thread_continues() {
    let home = tempfile::tempdir().unwrap();
    let pid_file = home.path().join("pid");
    let script = format!("echo $$ > {}; exec sleep 30", pid_file.display());
    let mock = MockModel::start(vec![
        MockResponse::shell("long", &["sh", "-c", &script]),
        MockResponse::text("next turn works"),
    ])
    .await
    .unwrap();
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let mut thread = runtime
        .start_thread(settings(&mock, home.path(), home.path()))
        .await
        .unwrap();
    thread.submit(say("run it")).unwrap();
    until(&mut thread, |e| {
        matches!(e, EventMsg::ExecCommandBegin { .. })
    })
    .await;
    let mut pid = None;
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(&pid_file) {
            if let Ok(n) = text.trim().parse::<i32>() {
                pid = Some(n);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = pid.expect("the command wrote its pid");
    let events = interrupt(&mut thread).await;
    // The command's item is closed: exactly one end, "killed", before the abort.
    let ends: Vec<(&str, Option<i32>)> = events
        .iter()
        .filter_map(|msg| match msg {
            EventMsg::ExecCommandEnd {
                call_id, exit_code, ..
            } => Some((call_id.as_str(), *exit_code)),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![("long", Some(137))], "{events:?}");
    // By the time the abort is reported the process is dead (a zombie awaiting reaping at most).
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim().chars().next();
    assert!(
        matches!(state, None | Some('Z') | Some('X')),
        "process {pid} still alive: {stat}"
    );

    thread.submit(say("again")).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "next turn works"),
        "{events:?}"
    );
    // The history the model saw kept the interrupted call; the session did not lose it.
    let input = mock.requests()[1].body["input"].as_array().unwrap().clone();
    assert!(input
        .iter()
        .any(|i| i["type"] == "function_call" && i["call_id"] == "long"));
    let aborted = input
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == "long")
        .expect("the interrupted call got an output");
    assert!(aborted["output"].as_str().unwrap().starts_with("aborted"));
    runtime.stop();
}
