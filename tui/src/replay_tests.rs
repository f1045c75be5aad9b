#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::cells::Cell;
use crate::thread_view::ThreadStatus;
use troupe_messages::ids::TurnId;
use troupe_messages::usage::TokenUsage;

fn line(timestamp: &str, record: RolloutRecord) -> RolloutLine {
    RolloutLine {
        timestamp: timestamp.into(),
        record,
    }
}

fn event(timestamp: &str, msg: EventMsg) -> RolloutLine {
    line(timestamp, RolloutRecord::Event(msg))
}

#[test]
fn a_rollout_becomes_the_transcript_it_recorded() {
    let lines = vec![
        line(
            "2026-01-01T10:00:00.000Z",
            RolloutRecord::ResponseItem(ResponseItem::user_text(
                "<environment_context>cwd</environment_context>",
            )),
        ),
        line(
            "2026-01-01T10:00:00.000Z",
            RolloutRecord::ResponseItem(ResponseItem::user_text("list the files")),
        ),
        event(
            "2026-01-01T10:00:00.000Z",
            EventMsg::TurnStarted { turn_id: TurnId(1) },
        ),
        event(
            "2026-01-01T10:00:01.000Z",
            EventMsg::ExecApprovalRequest {
                call_id: "c1".into(),
                command: vec!["ls".into()],
                cwd: "/w".into(),
                reason: None,
                sandbox_retry: None,
            },
        ),
        event(
            "2026-01-01T10:00:02.000Z",
            EventMsg::ExecCommandEnd {
                call_id: "c1".into(),
                command: vec!["ls".into()],
                exit_code: Some(0),
                aggregated_output: "a.txt\n".into(),
                duration_ms: 5,
                timed_out: false,
                user_shell: false,
            },
        ),
        event(
            "2026-01-01T10:00:03.000Z",
            EventMsg::AgentMessage {
                message: "One file: a.txt".into(),
            },
        ),
        event(
            "2026-01-01T10:00:04.500Z",
            EventMsg::TurnComplete {
                turn_id: TurnId(1),
                last_agent_message: None,
                usage: TokenUsage::default(),
            },
        ),
        // A crashed second turn: started, never ended.
        line(
            "2026-01-01T10:01:00.000Z",
            RolloutRecord::ResponseItem(ResponseItem::user_text("and again")),
        ),
        event(
            "2026-01-01T10:01:00.000Z",
            EventMsg::TurnStarted { turn_id: TurnId(2) },
        ),
    ];
    let view = replay(&lines, Instant::now());
    let kinds: Vec<String> = view
        .cells
        .iter()
        .map(|c| match c {
            Cell::User { text, .. } => format!("user {text}"),
            Cell::Command(cmd) => format!("command {}", cmd.command),
            Cell::Assistant { markdown, .. } => format!("assistant {markdown}"),
            Cell::TurnFooter { elapsed_ms, .. } => format!("footer {elapsed_ms}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "user list the files",
            "command ls",
            "assistant One file: a.txt",
            // The turn's duration comes from the line timestamps.
            "footer 4500",
            "user and again",
        ]
    );
    assert_eq!(
        view.prompts,
        vec![(1, "list the files".into()), (2, "and again".into())]
    );
    // No approval is pending, no turn is running: the runtime's own events come next.
    assert_eq!(view.status, ThreadStatus::Starting);
    assert!(view.live.is_empty());
    assert!(view.turn_started.is_none());
}
