//! The thread manager never waits on one thread's start: a resume of a 100,000-item rollout
//! (loading and replaying it takes a while) must not delay threads started meanwhile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support::runtime as runtime_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use troupe_actors::rollout_recorder::encode;
use troupe_actors::rollout_recorder::path::{now_rfc3339, rollout_path};
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::ids::ThreadId;
use troupe_messages::items::ResponseItem;
use troupe_messages::rollout::{RolloutLine, RolloutRecord, SessionMeta, ROLLOUT_FORMAT_VERSION};
use troupe_mock_model::MockModel;

const ITEMS: usize = 100_000;
const STARTS: usize = 20;

/// A finished thread whose history holds `items` messages.
fn write_long_rollout(
    home: &std::path::Path,
    cwd: &std::path::Path,
    items: usize,
) -> std::path::PathBuf {
    let thread_id = ThreadId::new();
    let created_at = now_rfc3339();
    let meta = SessionMeta {
        version: ROLLOUT_FORMAT_VERSION,
        thread_id,
        parent_thread_id: None,
        forked_at_turn: None,
        cwd: cwd.to_path_buf(),
        model: "mock-model".into(),
        model_provider: "mock".into(),
        instructions_digest: None,
        cli_version: "0.1.0".into(),
        created_at: created_at.clone(),
        git: None,
        agent: None,
    };
    let line = |record| RolloutLine {
        timestamp: created_at.clone(),
        record,
    };
    let mut lines = vec![line(RolloutRecord::SessionMeta(meta))];
    lines.extend((0..items).map(|n| {
        line(RolloutRecord::ResponseItem(ResponseItem::user_text(
            format!("message number {n} of a long thread"),
        )))
    }));
    let path = rollout_path(home, thread_id);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, encode(&lines).unwrap()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_starts_are_not_delayed_behind_a_long_resume() {
    let mock = MockModel::start(vec![]).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let settings = runtime_support::settings(&mock, home.path(), cwd.path());
    let long = write_long_rollout(home.path(), cwd.path(), ITEMS);
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();

    // Tickets in the order the opens complete.
    let finished = Arc::new(AtomicUsize::new(0));
    let resume = {
        let (finished, settings) = (finished.clone(), settings.clone());
        let runtime = &runtime;
        async move {
            let client = runtime.resume_thread(settings, long).await;
            (finished.fetch_add(1, Ordering::SeqCst), client)
        }
    };
    let starts = (0..STARTS).map(|_| {
        let (finished, settings) = (finished.clone(), settings.clone());
        let runtime = &runtime;
        async move {
            let client = runtime.start_thread(settings).await;
            (finished.fetch_add(1, Ordering::SeqCst), client)
        }
    });
    // `join!` polls the resume first: its request reaches the thread manager before the starts.
    let ((resume_ticket, resumed), started) =
        tokio::join!(resume, futures::future::join_all(starts));
    for (_, client) in &started {
        assert!(
            client.is_ok(),
            "a start failed: {:?}",
            client.as_ref().err()
        );
    }
    let resumed = resumed.expect("the long thread resumes");
    let history_len = {
        let reply = ractor::call_t!(
            resumed.handle.session,
            |reply| troupe_messages::mailboxes::SessionMsg::GetHistory { reply },
            30_000
        );
        reply.unwrap().len()
    };
    assert_eq!(
        history_len, ITEMS,
        "the resumed thread has its whole history"
    );
    assert_eq!(
        resume_ticket,
        STARTS,
        "every start completed before the long resume (the resume finished {}th of {})",
        resume_ticket + 1,
        STARTS + 1
    );
    runtime.stop();
}
