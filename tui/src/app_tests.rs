use super::*;
use crossterm::event::KeyEvent;
use std::path::PathBuf;
use troupe_messages::ids::TurnId;

fn app() -> App {
    let mut app = App::new(StatusInfo {
        model: "m".into(),
        effort: None,
        approval: AskForApproval::OnRequest,
        sandbox: SandboxMode::WorkspaceWrite,
        cwd: PathBuf::from("/w"),
        branch: None,
        context_window: None,
    });
    app.add_root(0, "main".into(), Instant::now());
    app
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

#[test]
fn enter_submits_to_the_current_thread() {
    let mut app = app();
    app.composer.set_text("hello");
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        vec![Action::Submit {
            client: 0,
            op: Op::UserInput {
                items: vec![UserInput::Text {
                    text: "hello".into()
                }]
            }
        }]
    );
}

#[test]
fn approvals_from_a_sub_agent_are_answered_through_its_root() {
    let mut app = app();
    let child = ThreadId::new();
    let request = EventMsg::ExecApprovalRequest {
        call_id: "c9".into(),
        command: vec!["rm".into(), "x".into()],
        cwd: "/w".into(),
        reason: None,
    };
    app.on_event(
        0,
        EventMsg::AgentEvent {
            thread_id: child,
            task_path: "/root/a".into(),
            msg: Box::new(request),
        },
        Instant::now(),
    );
    assert_eq!(app.threads.len(), 2);
    assert_eq!(app.threads[1].path, "/root/a");
    // Typing does nothing while the overlay is up; `a` answers for the session.
    assert!(app.on_key(key(KeyCode::Char('x'))).is_empty());
    let actions = app.on_key(key(KeyCode::Char('a')));
    assert_eq!(
        actions,
        vec![Action::Submit {
            client: 0,
            op: Op::AgentApproval {
                thread_id: child,
                call_id: "c9".into(),
                decision: ReviewDecision::ApprovedForSession
            }
        }]
    );
    assert!(app.approvals.is_empty());
}

#[test]
fn escape_interrupts_a_running_turn_and_esc_on_approval_aborts() {
    let mut app = app();
    app.on_event(
        0,
        EventMsg::TurnStarted { turn_id: TurnId(1) },
        Instant::now(),
    );
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        vec![Action::Submit {
            client: 0,
            op: Op::Interrupt
        }]
    );
    app.on_event(
        0,
        EventMsg::ExecApprovalRequest {
            call_id: "c".into(),
            command: vec!["ls".into()],
            cwd: "/".into(),
            reason: None,
        },
        Instant::now(),
    );
    assert_eq!(
        app.on_key(key(KeyCode::Esc)),
        vec![Action::Submit {
            client: 0,
            op: Op::ExecApproval {
                call_id: "c".into(),
                decision: ReviewDecision::Abort
            }
        }]
    );
}

#[test]
fn slash_commands_run_from_the_popup_and_by_name() {
    let mut app = app();
    app.composer.set_text("/qu");
    assert_eq!(app.on_key(key(KeyCode::Enter)), vec![Action::Quit]);
    let mut app = self::app();
    app.composer.set_text("/model gpt-x");
    let actions = app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(&actions[0], Action::Submit { op: Op::OverrideTurnContext { model: Some(m), .. }, .. } if m == "gpt-x")
    );
    app.composer.set_text("/agents");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::Threads { selected: 0 });
}

#[test]
fn the_threads_panel_switches_the_transcript() {
    let mut app = app();
    let child = ThreadId::new();
    app.on_event(
        0,
        EventMsg::AgentEvent {
            thread_id: child,
            task_path: "/root/b".into(),
            msg: Box::new(EventMsg::Warning {
                message: "child says".into(),
            }),
        },
        Instant::now(),
    );
    app.take_scrollback();
    app.on_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.current, 1);
    let shown = app.take_scrollback();
    assert!(shown
        .iter()
        .any(|c| matches!(c, Cell::Notice { text, .. } if text == "child says")));
    // A sub-agent is read-only: typing to it submits nothing.
    app.composer.set_text("hi");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
}
