//! A unified-exec session still running when its turn ends is killed and ends with exactly
//! one `ExecCommandEnd` — before the turn completes — through the real `troupe exec --json`:
//! its `command_execution` item is completed (killed: exit code 137, the output seen so
//! far), and the rollout records the end under the command the model asked for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use troupe_actors::rollout_recorder::loader;
use troupe_messages::events::EventMsg;
use troupe_messages::rollout::RolloutRecord;
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, Harness};

#[test]
fn a_session_left_running_ends_with_the_turn_and_its_item_is_completed() {
    let start = json!({
        "cmd": "echo started; sleep 30",
        "login": false,
        "yield_time_ms": 300
    });
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("e1", "exec_command", start.to_string())]),
        MockResponse::text("leaving it running"),
    ]);
    let out = h.exec(&[
        "--json",
        "-c",
        "shell_tool_type=\"exec_command\"",
        "start something slow",
    ]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let lines = json_lines(&out);
    let first = &troupe_test_support::tool_outputs(&h.mock.requests()[1].body)[0];
    assert!(
        first.contains("Process running with session ID 1"),
        "{first}"
    );

    let commands: Vec<&Value> = lines
        .iter()
        .filter(|line| line["item"]["type"] == "command_execution")
        .collect();
    assert_eq!(commands.len(), 2, "{commands:#?}");
    let (started, ended) = (commands[0], commands[1]);
    assert_eq!(started["type"], "item.started");
    assert_eq!(ended["type"], "item.completed");
    assert_eq!(ended["item"]["id"], started["item"]["id"]);
    assert_eq!(ended["item"]["exit_code"], 137);
    assert_eq!(ended["item"]["status"], "failed");
    // Unconfined (the harness's default), the session runs under the supervising trampoline:
    // its end still names the command the model asked for.
    let command = ended["item"]["command"].as_str().unwrap();
    assert!(command.contains("echo started; sleep 30"), "{command}");
    assert!(!command.contains("troupe"), "{command}");
    let output = ended["item"]["aggregated_output"].as_str().unwrap();
    assert!(output.contains("started"), "{output}");
    assert!(
        output.ends_with("[process killed: the turn ended while it was running]"),
        "{output}"
    );
    // The end comes before the turn is reported complete.
    let position = |kind: &str| lines.iter().position(|line| line["type"] == kind);
    let completed_at = lines
        .iter()
        .position(|line| std::ptr::eq(line, ended))
        .unwrap();
    assert!(
        Some(completed_at) < position("turn.completed"),
        "{lines:#?}"
    );

    let rollouts = h.rollouts();
    assert_eq!(rollouts.len(), 1);
    let ends: Vec<(String, Option<i32>)> = loader::load(&rollouts[0])
        .unwrap()
        .lines
        .into_iter()
        .filter_map(|line| match line.record {
            RolloutRecord::Event(EventMsg::ExecCommandEnd {
                call_id, exit_code, ..
            }) => Some((call_id, exit_code)),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![("e1".to_string(), Some(137))]);
}
