use super::*;
use crossterm::event::KeyEvent;
use std::path::PathBuf;
use troupe_messages::ids::TurnId;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::policy::CollaborationMode;

fn app() -> App {
    let mut app = App::new(StatusInfo {
        model: "m".into(),
        effort: None,
        approval: AskForApproval::OnRequest,
        sandbox: SandboxMode::WorkspaceWrite,
        cwd: PathBuf::from("/w"),
        branch: None,
        context_window: None,
        plan_mode: false,
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
        sandbox_retry: None,
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
            sandbox_retry: None,
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
        matches!(&actions[0], Action::ListModels { request: crate::app::model::ModelRequest::Switch(m), .. } if m == "gpt-x")
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
    // Typed into a sub-agent's transcript: routed to it through its root.
    app.composer.set_text("hi");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        vec![
            Action::Submit {
                client: 0,
                op: Op::AgentUserInput {
                    thread_id: child,
                    items: vec![UserInput::Text { text: "hi".into() }],
                },
            },
            Action::RecordHistory {
                session_id: child.to_string(),
                text: "hi".into(),
            },
        ]
    );
}

fn configured(app: &mut App, id: ThreadId) -> Vec<Action> {
    app.on_event(
        0,
        EventMsg::SessionConfigured {
            thread_id: id,
            model: "m".into(),
            model_provider: "p".into(),
            cwd: "/w".into(),
            approval_policy: AskForApproval::OnRequest,
            sandbox_mode: SandboxMode::WorkspaceWrite,
            rollout_path: "/r.jsonl".into(),
        },
        Instant::now(),
    )
}

#[test]
fn a_message_typed_before_the_thread_started_is_recorded_once_it_has_an_id() {
    let mut app = app();
    app.composer.set_text("early");
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(actions.len(), 1, "{actions:?}");
    let id = ThreadId::new();
    assert_eq!(
        configured(&mut app, id),
        vec![Action::RecordHistory {
            session_id: id.to_string(),
            text: "early".into()
        }]
    );
}

#[test]
fn escape_twice_on_an_empty_composer_edits_a_previous_message() {
    let mut app = app();
    let id = ThreadId::new();
    configured(&mut app, id);
    let now = Instant::now();
    for (turn, text) in [(1, "first"), (2, "second")] {
        app.composer.set_text(text);
        app.on_key(key(KeyCode::Enter));
        app.on_event(
            0,
            EventMsg::TurnStarted {
                turn_id: TurnId(turn),
            },
            now,
        );
        app.on_event(
            0,
            EventMsg::TurnComplete {
                turn_id: TurnId(turn),
                last_agent_message: None,
                usage: troupe_messages::usage::TokenUsage::default(),
            },
            now,
        );
    }
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert!(app.esc_primed);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::Backtrack { selected: 1 });
    app.on_key(key(KeyCode::Up));
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        vec![Action::EditFrom {
            thread: id,
            turn: 1,
            text: "first".into()
        }]
    );
    // Another key in between disarms the double Esc.
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Char('x')));
    app.composer.clear();
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn tab_completes_a_file_and_a_skill() {
    let mut app = app();
    app.files = vec!["docs/guide.md".into(), "src/main.rs".into()];
    app.skills = vec![crate::completion::SkillEntry {
        name: "deploy".into(),
        description: "ship it".into(),
    }];
    app.composer.set_text("read @mai");
    assert!(app.on_key(key(KeyCode::Tab)).is_empty());
    assert_eq!(app.composer.text(), "read src/main.rs ");
    app.composer.set_text("then $dep");
    // Enter takes the completion rather than sending.
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.composer.text(), "then $deploy ");
}

#[test]
fn plan_permissions_and_reasoning_commands() {
    let mut app = app();
    app.composer.set_text("/plan");
    let actions = app.on_key(key(KeyCode::Enter));
    assert!(app.status.plan_mode);
    assert!(matches!(
        &actions[..],
        [Action::Submit {
            op: Op::OverrideTurnContext {
                collaboration_mode: Some(CollaborationMode::Plan),
                ..
            },
            ..
        }]
    ));
    app.composer.set_text("/permissions full-access");
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(app.status.sandbox, SandboxMode::DangerFullAccess);
    assert_eq!(app.status.approval, AskForApproval::Never);
    assert!(matches!(
        &actions[..],
        [Action::Submit {
            op: Op::OverrideTurnContext {
                sandbox_mode: Some(SandboxMode::DangerFullAccess),
                approval_policy: Some(AskForApproval::Never),
                ..
            },
            ..
        }]
    ));
    app.composer.set_text("/permissions sideways");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.status.sandbox, SandboxMode::DangerFullAccess);
    // Reasoning is collapsed when written unless /reasoning expands it.
    app.threads[0].view.push(Cell::Reasoning {
        text: "a\nb".into(),
        expanded: true,
    });
    app.take_scrollback();
    app.threads[0].view.push(Cell::Reasoning {
        text: "a\nb".into(),
        expanded: false,
    });
    let written = app.take_scrollback();
    assert!(written.iter().any(|c| matches!(
        c,
        Cell::Reasoning {
            expanded: false,
            ..
        }
    )));
    // Ctrl+O opens the transcript (reasoning whole there); Ctrl+O again closes it.
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert!(matches!(app.overlay, Overlay::Transcript(_)));
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    assert_eq!(app.overlay, Overlay::None);
    app.composer.set_text("/mention");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.composer.text(), "@");
}

#[test]
fn a_thread_title_is_the_first_line_cut_to_forty_characters() {
    assert_eq!(
        crate::app::thread_title("\n  fix the login test  \nand more"),
        "fix the login test"
    );
    let long = "a".repeat(60);
    let title = crate::app::thread_title(&long);
    assert_eq!(title.chars().count(), 40);
    assert!(title.ends_with('…'));
}

fn queue_during_a_turn(app: &mut App, text: &str) {
    app.on_event(
        0,
        EventMsg::TurnStarted { turn_id: TurnId(1) },
        Instant::now(),
    );
    app.composer.set_text(text);
    let actions = app.on_key(key(KeyCode::Tab));
    assert!(actions.is_empty(), "Tab sends nothing during the turn");
    assert!(app.composer.is_empty());
}

#[test]
fn tab_queues_a_message_that_goes_when_the_turn_completes() {
    let mut app = app();
    queue_during_a_turn(&mut app, "after this");
    let actions = app.on_event(
        0,
        EventMsg::TurnComplete {
            turn_id: TurnId(1),
            last_agent_message: None,
            usage: Default::default(),
        },
        Instant::now(),
    );
    assert!(actions.contains(&Action::Submit {
        client: 0,
        op: Op::UserInput {
            items: vec![UserInput::Text {
                text: "after this".into()
            }]
        }
    }));
}

#[test]
fn an_interrupted_turn_gives_the_queued_message_back_to_the_composer() {
    let mut app = app();
    queue_during_a_turn(&mut app, "after this");
    let actions = app.on_event(
        0,
        EventMsg::TurnAborted {
            turn_id: TurnId(1),
            reason: troupe_messages::events::AbortReason::Interrupted,
        },
        Instant::now(),
    );
    assert!(!actions.iter().any(|a| matches!(a, Action::Submit { .. })));
    assert_eq!(app.composer.text(), "after this");
}

#[test]
fn question_mark_opens_the_sheet_only_on_an_empty_composer() {
    let mut app = app();
    app.on_key(key(KeyCode::Char('?')));
    assert!(app.composer.is_empty());
    let written = app.take_scrollback();
    assert!(
        written.iter().any(
            |c| matches!(c, Cell::Notice { text, .. } if text.starts_with("keyboard shortcuts"))
        ),
        "{written:?}"
    );
    app.composer.set_text("why");
    app.on_key(key(KeyCode::Char('?')));
    assert_eq!(app.composer.text(), "why?");
}
