use super::super::{Action, App, StatusInfo};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::PathBuf;
use std::time::Instant;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::items::ResponseItem;
use troupe_messages::ops::{Op, ReviewDecision};
use troupe_messages::policy::{AskForApproval, SandboxMode};

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

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        assert!(app.on_key(key(KeyCode::Char(c))).is_empty());
    }
}

/// A sub-agent `/root/a` of client 0 asks to run `rm x`.
fn agent_asks(app: &mut App) -> ThreadId {
    let child = ThreadId::new();
    app.on_event(
        0,
        EventMsg::AgentEvent {
            thread_id: child,
            task_path: "/root/a".into(),
            msg: Box::new(EventMsg::ExecApprovalRequest {
                call_id: "c9".into(),
                command: vec!["rm".into(), "x".into()],
                cwd: "/w".into(),
                reason: None,
                sandbox_retry: None,
            }),
        },
        Instant::now(),
    );
    child
}

#[test]
fn d_types_a_message_that_goes_with_the_denial() {
    let mut app = app();
    let child = agent_asks(&mut app);
    assert!(app.on_key(key(KeyCode::Char('d'))).is_empty());
    assert_eq!(app.deny_message.as_deref(), Some(""));
    // Keys are the message's now: `y` is a letter, not an approval.
    typed(&mut app, "yes, but use trash");
    assert!(app.on_key(key(KeyCode::Backspace)).is_empty());
    app.on_paste("\nand log it");
    assert_eq!(
        app.deny_message.as_deref(),
        Some("yes, but use tras and log it")
    );
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        vec![Action::Submit {
            client: 0,
            op: Op::AgentApproval {
                thread_id: child,
                call_id: "c9".into(),
                decision: ReviewDecision::DeniedWithMessage {
                    message: "yes, but use tras and log it".into()
                }
            }
        }]
    );
    assert!(app.approvals.is_empty());
    assert!(app.deny_message.is_none());
}

#[test]
fn esc_in_the_message_goes_back_to_the_choices_and_an_empty_one_is_not_sent() {
    let mut app = app();
    agent_asks(&mut app);
    app.on_key(key(KeyCode::Char('d')));
    assert!(app.on_key(key(KeyCode::Enter)).is_empty(), "nothing typed");
    typed(&mut app, "no");
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert!(app.deny_message.is_none());
    assert_eq!(app.approvals.len(), 1, "still waiting");
    // Back at the choices: `n` is a plain denial.
    let actions = app.on_key(key(KeyCode::Char('n')));
    assert!(matches!(
        &actions[0],
        Action::Submit {
            op: Op::AgentApproval {
                decision: ReviewDecision::Denied,
                ..
            },
            ..
        }
    ));
}

#[test]
fn o_shows_the_asking_thread_and_esc_brings_the_overlay_back() {
    let mut app = app();
    agent_asks(&mut app);
    assert_eq!(app.current, 0);
    assert!(app.approval_shown().is_some());
    assert!(app.on_key(key(KeyCode::Char('o'))).is_empty());
    assert_eq!(app.threads[app.current].path, "/root/a");
    assert!(app.approval_shown().is_none(), "set aside");
    assert_eq!(app.approvals.len(), 1, "still pending");
    // Keys go to the composer meanwhile.
    typed(&mut app, "hi");
    assert_eq!(app.composer.text(), "hi");
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert_eq!(app.current, 0, "back where it was");
    assert!(app.approval_shown().is_some());
    assert_eq!(app.on_key(key(KeyCode::Char('y'))).len(), 1);
}

#[test]
fn bang_runs_a_shell_command_in_an_idle_main_thread_only() {
    let mut app = app();
    app.composer.set_text("!echo hi");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        vec![Action::Submit {
            client: 0,
            op: Op::RunUserShellCommand {
                command: "echo hi".into(),
                timeout_ms: None,
            }
        }]
    );
    // Not a message: no user cell.
    assert!(!app.threads[0]
        .view
        .cells
        .iter()
        .any(|c| matches!(c, crate::cells::Cell::User { .. })));
    // A turn running: refused in one line, the command kept in the composer.
    app.on_event(
        0,
        EventMsg::TurnStarted { turn_id: TurnId(1) },
        Instant::now(),
    );
    app.composer.set_text("!ls");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.composer.text(), "!ls");
    let taken = app.take_scrollback();
    assert!(taken.iter().any(|c| matches!(c,
        crate::cells::Cell::Notice { text, .. } if text.contains("a turn is running"))));
    // Nothing after `!`.
    let mut app = self::app();
    app.composer.set_text("!");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
}

#[test]
fn verdicts_quote_the_message() {
    assert_eq!(
        super::verdict(
            &ReviewDecision::DeniedWithMessage {
                message: "use trash".into()
            },
            None
        ),
        "denied: “use trash”"
    );
    assert_eq!(super::verdict(&ReviewDecision::Denied, None), "denied");
}

/// The main thread asks to run `touch /srv/x` again, with `retry` added.
fn retry_asked(app: &mut App, retry: troupe_messages::permissions::SandboxRetry) {
    app.on_event(
        0,
        EventMsg::ExecApprovalRequest {
            call_id: "r1".into(),
            command: vec!["touch".into(), "/srv/x".into()],
            cwd: "/w".into(),
            reason: Some(retry.question()),
            sandbox_retry: Some(retry),
        },
        Instant::now(),
    );
}

fn decision_of(actions: &[Action]) -> Option<ReviewDecision> {
    match actions {
        [Action::Submit {
            op: Op::ExecApproval { decision, .. },
            ..
        }] => Some(decision.clone()),
        _ => None,
    }
}

#[test]
fn a_sandbox_retry_grants_with_y_and_runs_unconfined_only_with_u() {
    use troupe_messages::permissions::SandboxRetry;
    let write = SandboxRetry::Write { dir: "/srv".into() };
    let mut app = app();
    retry_asked(&mut app, write.clone());
    // `a` would say the same as `y` (a grant is for the session): not a choice here.
    assert!(app.on_key(key(KeyCode::Char('a'))).is_empty());
    let actions = app.on_key(key(KeyCode::Char('y')));
    assert_eq!(decision_of(&actions), Some(ReviewDecision::Approved));
    retry_asked(&mut app, SandboxRetry::Network);
    let actions = app.on_key(key(KeyCode::Char('u')));
    assert_eq!(
        decision_of(&actions),
        Some(ReviewDecision::ApprovedWithoutSandbox)
    );
    // Nothing specific found: `y` is the unsandboxed retry, and `u` is not a key.
    retry_asked(&mut app, SandboxRetry::Unconfined);
    assert!(app.on_key(key(KeyCode::Char('u'))).is_empty());
    let actions = app.on_key(key(KeyCode::Char('a')));
    assert_eq!(
        decision_of(&actions),
        Some(ReviewDecision::ApprovedForSession)
    );
    assert_eq!(
        super::verdict(&ReviewDecision::Approved, Some(&write)),
        "writing to /srv allowed for the session; run again in the sandbox"
    );
    assert_eq!(
        super::verdict(&ReviewDecision::ApprovedWithoutSandbox, Some(&write)),
        "run again without the sandbox, once"
    );
}

/// A sub-agent's request answered elsewhere (a web page, through the agent's inbox) leaves
/// the queue once its call begins (approved) or its output is recorded (denied); what another
/// call or another agent does leaves it there.
#[test]
fn a_request_answered_elsewhere_leaves_the_queue() {
    let relayed = |child, msg| EventMsg::AgentEvent {
        thread_id: child,
        task_path: "/root/a".into(),
        msg: Box::new(msg),
    };
    let begin = |call_id: &str| EventMsg::ExecCommandBegin {
        call_id: call_id.into(),
        command: vec!["rm".into(), "x".into()],
        cwd: "/w".into(),
        user_shell: false,
    };
    let output = |call_id: &str| EventMsg::ItemRecorded {
        item: ResponseItem::FunctionCallOutput {
            call_id: call_id.into(),
            output: "exec command rejected by user".into(),
        },
    };
    let mut app = app();
    let child = agent_asks(&mut app);
    app.on_event(0, relayed(child, begin("c8")), Instant::now());
    assert!(
        app.approval_shown().is_some(),
        "another call settles nothing"
    );
    app.on_event(0, relayed(child, begin("c9")), Instant::now());
    assert!(app.approvals.is_empty(), "approved elsewhere, it runs");

    let other = agent_asks(&mut app);
    app.on_event(0, relayed(child, output("c9")), Instant::now());
    assert_eq!(
        app.approvals.len(),
        1,
        "another agent's call of the same id"
    );
    app.on_event(0, relayed(other, output("c9")), Instant::now());
    assert!(
        app.approvals.is_empty(),
        "denied elsewhere, its output recorded"
    );
    assert!(app.approval_shown().is_none());
}
