//! Unified-exec sessions under interrupt, through the runtime API: a session left running
//! by one step and being waited on by a later `write_stdin` is killed, with its process
//! group, and ends with one `ExecCommandEnd`, before the abort is reported; the thread goes on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::time::Duration;
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::settings::ShellToolType;
use troupe_mock_model::{MockModel, MockResponse};
use troupe_test_support::runtime::{interrupt, is_turn_end, say, settings, until};

/// Alive, as opposed to gone or a zombie.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim()
                .starts_with(['Z', 'X'])
        })
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_kills_exec_sessions_and_the_thread_continues() {
    let home = tempfile::tempdir().unwrap();
    let pid_file = home.path().join("pids");
    // The background sleep ignores the terminal hang-up: only a group kill ends it.
    let cmd = format!(
        "trap '' HUP; sleep 300 & echo $$ $! > {}; wait",
        pid_file.display()
    );
    let start = json!({"cmd": cmd, "login": false, "yield_time_ms": 500}).to_string();
    let poll = json!({"session_id": 1, "chars": "", "yield_time_ms": 30000}).to_string();
    let mock = MockModel::start(vec![
        MockResponse::tool_calls(vec![("e1", "exec_command", start)]),
        MockResponse::tool_calls(vec![("w1", "write_stdin", poll)]),
        MockResponse::text("next turn works"),
    ])
    .await
    .unwrap();
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let mut config = settings(&mock, home.path(), home.path());
    config.tools.shell = ShellToolType::ExecCommand;
    let mut thread = runtime.start_thread(config).await.unwrap();
    thread.submit(say("start it")).unwrap();
    // The second request carries exec_command's output; write_stdin is then waiting.
    for _ in 0..500 {
        if mock.requests().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(mock.requests().len() >= 2, "exec_command never returned");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pids: Vec<i32> = std::fs::read_to_string(&pid_file)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(pids.iter().all(|&pid| running(pid)), "{pids:?}");

    let events = interrupt(&mut thread).await;
    for pid in &pids {
        assert!(!running(*pid), "process {pid} survived the interrupt");
    }
    // The session ended with exactly one end event, killed, before the abort.
    let ends: Vec<(&str, Option<i32>, &str)> = events
        .iter()
        .filter_map(|msg| match msg {
            EventMsg::ExecCommandEnd {
                call_id,
                exit_code,
                aggregated_output,
                ..
            } => Some((call_id.as_str(), *exit_code, aggregated_output.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1, "{events:?}");
    assert_eq!((ends[0].0, ends[0].1), ("e1", Some(137)), "{events:?}");
    assert!(
        ends[0]
            .2
            .ends_with("[process killed: the turn was stopped while it was running]"),
        "{events:?}"
    );

    thread.submit(say("again")).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { last_agent_message: Some(m), .. }) if m == "next turn works"),
        "{events:?}"
    );
}
