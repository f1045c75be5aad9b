use super::*;
use troupe_messages::ids::{ThreadId, TurnId};

fn run(view: &mut ThreadView, msgs: Vec<EventMsg>) {
    let now = Instant::now();
    for msg in msgs {
        view.apply(&msg, now);
    }
}

#[test]
fn a_streamed_answer_is_live_until_finished() {
    let mut view = ThreadView::new(Instant::now());
    run(
        &mut view,
        vec![
            EventMsg::TurnStarted { turn_id: TurnId(1) },
            EventMsg::AgentMessageDelta {
                delta: "Hel".into(),
            },
            EventMsg::AgentMessageDelta { delta: "lo".into() },
        ],
    );
    assert_eq!(
        view.live,
        vec![Cell::Assistant {
            markdown: "Hello".into(),
            streaming: true
        }]
    );
    run(
        &mut view,
        vec![EventMsg::AgentMessage {
            message: "Hello".into(),
        }],
    );
    assert!(view.live.is_empty());
    assert_eq!(
        view.cells.back(),
        Some(&Cell::Assistant {
            markdown: "Hello".into(),
            streaming: false
        })
    );
}

#[test]
fn a_steer_stays_pending_until_injected() {
    let mut view = ThreadView::new(Instant::now());
    run(
        &mut view,
        vec![EventMsg::TurnStarted { turn_id: TurnId(1) }],
    );
    view.user_message("more".into());
    assert_eq!(
        view.live,
        vec![Cell::User {
            text: "more".into(),
            pending: true
        }]
    );
    run(
        &mut view,
        vec![EventMsg::InputInjected {
            turn_id: TurnId(1),
            text: "more".into(),
        }],
    );
    assert!(view.live.is_empty());
    assert_eq!(
        view.cells.back(),
        Some(&Cell::User {
            text: "more".into(),
            pending: false
        })
    );
}

#[test]
fn an_interrupt_marks_running_commands_killed() {
    let mut view = ThreadView::new(Instant::now());
    run(
        &mut view,
        vec![
            EventMsg::TurnStarted { turn_id: TurnId(1) },
            EventMsg::ExecCommandBegin {
                call_id: "c".into(),
                command: vec!["sleep".into(), "9".into()],
                cwd: "/".into(),
                user_shell: false,
            },
            EventMsg::TurnAborted {
                turn_id: TurnId(1),
                reason: AbortReason::Interrupted,
            },
        ],
    );
    assert!(view.live.is_empty());
    assert!(matches!(&view.cells[0], Cell::Command(c) if c.exit_code == Some(None)));
    assert!(matches!(&view.cells[1], Cell::TurnFooter { outcome, .. } if outcome == "interrupted"));
    assert_eq!(view.status, ThreadStatus::Interrupted);
}

#[test]
fn the_transcript_and_streams_are_bounded() {
    let mut view = ThreadView::new(Instant::now());
    for n in 0..(MAX_CELLS + 50) {
        view.notice(NoticeKind::Info, n.to_string());
    }
    assert_eq!(view.cells.len(), MAX_CELLS);
    let chunk = "z".repeat(64 * 1024);
    for _ in 0..100 {
        view.apply(
            &EventMsg::AgentMessageDelta {
                delta: chunk.clone(),
            },
            Instant::now(),
        );
    }
    let Some(Cell::Assistant { markdown, .. }) = view.live.first() else {
        panic!("no live answer")
    };
    assert!(markdown.len() <= STREAM_KEEP_BYTES);
}

#[test]
fn a_sub_agents_report_is_a_notice_not_a_user_message() {
    let mut view = ThreadView::new(Instant::now());
    let child = "00000000-0000-7000-8000-0000000000c1"
        .parse()
        .unwrap_or_else(|_| unreachable!());
    let report = troupe_actors::agents::watcher::notification(
        "/root/w1",
        "Ada",
        child,
        troupe_messages::agents::AgentStatus::Completed,
        "all done",
    );
    run(
        &mut view,
        vec![
            EventMsg::TurnStarted { turn_id: TurnId(1) },
            EventMsg::InputInjected {
                turn_id: TurnId(1),
                text: report,
            },
        ],
    );
    assert_eq!(
        view.cells.back(),
        Some(&Cell::Notice {
            kind: NoticeKind::Info,
            text: "agent /root/w1 (Ada) finished: all done".into(),
        })
    );
    assert!(!view
        .cells
        .iter()
        .chain(view.live.iter())
        .any(|c| matches!(c, Cell::User { .. })));
}

#[test]
fn a_user_shell_command_keeps_the_thread_busy_until_it_ends() {
    let now = Instant::now();
    let mut view = ThreadView::new(now);
    view.status = ThreadStatus::Idle;
    let argv = vec!["/bin/sh".to_string(), "-c".into(), "echo hi".into()];
    view.apply(
        &EventMsg::ExecCommandBegin {
            call_id: "user-shell-0".into(),
            command: argv.clone(),
            cwd: "/".into(),
            user_shell: true,
        },
        now,
    );
    assert_eq!(view.status, ThreadStatus::Running);
    assert!(view.turn_started.is_some());
    assert!(matches!(&view.live[0], Cell::Command(c) if c.user_shell && c.command == "echo hi"));
    view.apply(
        &EventMsg::ExecCommandEnd {
            call_id: "user-shell-0".into(),
            command: argv,
            exit_code: Some(0),
            aggregated_output: "hi\n".into(),
            duration_ms: 3,
            timed_out: false,
            user_shell: true,
        },
        now,
    );
    assert_eq!(view.status, ThreadStatus::Idle);
    assert!(view.turn_started.is_none());
    assert!(view.live.is_empty());
    assert!(matches!(view.cells.back(), Some(Cell::Command(c)) if c.exit_code == Some(Some(0))));
}

/// Agents spawned at once have UUIDv7 ids that share their leading time bits: a collaboration
/// call names them by the tail, which tells them apart.
#[test]
fn agents_spawned_together_are_named_apart() {
    let id = |text: &str| text.parse::<ThreadId>().unwrap();
    let a = id("01a249c8-0b6e-7c31-9a41-3f0e8d2b5c17");
    let b = id("01a249c8-0b6f-7d02-8e55-a9c4b1e07d3e");
    let mut view = ThreadView::new(Instant::now());
    run(
        &mut view,
        vec![EventMsg::CollabToolCall {
            call_id: "w1".into(),
            tool: "wait_agent".into(),
            sender_thread_id: ThreadId::new(),
            receiver_thread_ids: vec![a, b],
            prompt: None,
            agents_states: Default::default(),
            status: CollabCallStatus::Completed,
        }],
    );
    let targets = view
        .cells
        .iter()
        .chain(&view.live)
        .find_map(|c| match c {
            Cell::Agent { targets, .. } => Some(targets.clone()),
            _ => None,
        })
        .expect("the call's cell");
    assert_eq!(targets, vec!["…8d2b5c17", "…b1e07d3e"]);
}
