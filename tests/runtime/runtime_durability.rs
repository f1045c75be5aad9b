//! Durable before acknowledged, through the runtime API: when a client hears that a turn
//! started, that a tool result joined the history, or that a turn completed, the line is
//! already in the rollout file; the session keeps the thread index current.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;
use troupe_actors::rollout_recorder::loader;
use troupe_actors::runtime::Runtime;
use troupe_actors::thread_store::ThreadStore;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_config::resolve::{load_settings, CliOverrides};
use troupe_messages::events::EventMsg;
use troupe_messages::items::ResponseItem;
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::rollout::RolloutRecord;
use troupe_messages::threads::ThreadStatus;
use troupe_mock_model::{MockModel, MockResponse};

fn records(path: &std::path::Path) -> Vec<RolloutRecord> {
    loader::load(path)
        .unwrap()
        .lines
        .into_iter()
        .map(|l| l.record)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledgement_comes_after_its_line_is_on_disk() {
    let mock = MockModel::start(vec![
        MockResponse::shell("call_1", &["sh", "-c", "echo one"]),
        MockResponse::text("finished"),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model_provider = \"mock\"\nrollout_fsync = \"tool_results\"\n\
             [model_providers.mock]\nbase_url = \"{}\"\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let settings = load_settings(
        home.path(),
        &CliOverrides {
            cwd: Some(home.path().to_path_buf()),
            ..CliOverrides::default()
        },
    )
    .unwrap();
    let store = Arc::new(ThreadStore::open(home.path()).unwrap());
    let runtime =
        Runtime::start_with_store(ToolRegistry::with_builtin_tools(), Some(store.clone()))
            .await
            .unwrap();
    let mut thread = runtime.start_thread(settings).await.unwrap();
    let path = thread.handle.rollout_path.clone();
    let id = thread.handle.thread_id.to_string();
    thread
        .submit(Op::UserInput {
            items: vec![UserInput::Text {
                text: "do it".into(),
            }],
        })
        .unwrap();
    let mut checked = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), thread.next_event())
            .await
            .unwrap()
            .unwrap();
        match event.msg {
            EventMsg::TurnStarted { .. } => {
                let on_disk = records(&path);
                assert!(
                    on_disk.contains(&RolloutRecord::ResponseItem(ResponseItem::user_text(
                        "do it"
                    )))
                );
                assert!(
                    on_disk.contains(&RolloutRecord::Event(EventMsg::TurnStarted {
                        turn_id: troupe_messages::ids::TurnId(1)
                    }))
                );
                assert_eq!(
                    store.get(&id).unwrap().unwrap().status,
                    ThreadStatus::Running
                );
                checked.push("started");
            }
            EventMsg::ItemRecorded {
                item: item @ ResponseItem::FunctionCallOutput { .. },
            } => {
                assert!(records(&path).contains(&RolloutRecord::ResponseItem(item)));
                checked.push("tool result");
            }
            EventMsg::TurnComplete { .. } => {
                let on_disk = records(&path);
                assert!(matches!(
                    on_disk.last(),
                    Some(RolloutRecord::Event(EventMsg::TurnComplete { .. }))
                ));
                checked.push("completed");
                break;
            }
            EventMsg::Warning { message } => panic!("warning: {message}"),
            _ => {}
        }
    }
    assert_eq!(checked, ["started", "tool result", "completed"]);
    thread.submit(Op::Shutdown).unwrap();
    while thread.next_event().await.is_some() {}
    let entry = store.get(&id).unwrap().unwrap();
    assert_eq!(entry.status, ThreadStatus::Completed);
    assert_eq!(entry.title, "do it");
    assert_eq!(entry.rollout_bytes, std::fs::metadata(&path).unwrap().len());
    runtime.stop();
}

async fn history(thread: &troupe_actors::runtime::ThreadClient) -> Vec<ResponseItem> {
    use troupe_messages::mailboxes::SessionMsg;
    match thread
        .handle
        .session
        .call(
            |reply| SessionMsg::GetHistory { reply },
            Some(Duration::from_secs(10)),
        )
        .await
        .unwrap()
    {
        ractor::rpc::CallResult::Success(history) => history,
        other => panic!("no history: {other:?}"),
    }
}

async fn shut_down(mut thread: troupe_actors::runtime::ThreadClient) {
    thread.submit(Op::Shutdown).unwrap();
    while thread.next_event().await.is_some() {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_thread_has_the_compacted_history_and_continues_it() {
    use troupe_test_support::runtime::{is_turn_end, say, settings, until};
    let mock = MockModel::start(vec![
        MockResponse::text("first"),
        MockResponse::text("SUMMARY"),
        MockResponse::text("after"),
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
    thread.submit(say("hello")).unwrap();
    until(&mut thread, is_turn_end).await;
    thread.submit(Op::Compact).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(events
        .iter()
        .any(|e| matches!(e, EventMsg::ContextCompacted { .. })));
    let before = history(&thread).await;
    let path = thread.handle.rollout_path.clone();
    shut_down(thread).await;
    runtime.stop();
    let loaded = loader::load(&path).unwrap();
    assert!(loaded
        .lines
        .iter()
        .any(|l| matches!(l.record, RolloutRecord::Compacted(_))));

    // A new runtime, as after a restart.
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let mut thread = runtime
        .resume_thread(settings(&mock, home.path(), home.path()), path)
        .await
        .unwrap();
    assert_eq!(history(&thread).await, before);
    thread.submit(say("again")).unwrap();
    until(&mut thread, is_turn_end).await;
    let sent = mock.requests()[2].input().to_vec();
    let mut expected: Vec<serde_json::Value> = before
        .iter()
        .map(|i| serde_json::to_value(i).unwrap())
        .collect();
    expected.push(serde_json::to_value(ResponseItem::user_text("again")).unwrap());
    assert_eq!(sent, expected);
    shut_down(thread).await;
    runtime.stop();
}
