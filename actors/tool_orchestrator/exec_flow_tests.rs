//! The command flow against stub actors: two sandbox backends that answer from a script and
//! record what they were asked to run, a session that drops everything, and a user whose
//! answer is given when the approval request goes out.

use super::{run, CommandRequest};
use crate::approvals::{PendingApprovals, SessionApprovals};
use crate::hooks::TurnHooks;
use crate::locking::lock;
use crate::tool_orchestrator::contract::{ToolContext, ToolOutcome};
use crate::tool_orchestrator::services::TurnServices;
use crate::turn::outbox::EventSink;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::mailboxes::{SandboxMsg, SessionMsg};
use troupe_messages::ops::ReviewDecision;
use troupe_messages::policy::{AskForApproval, PermissionProfile, SandboxMode};
use troupe_messages::tools::REJECTED_BY_USER;
use troupe_messages::tools::{ExecRequest, ExecResult, ToolCall, ToolPayload};

/// A sandbox backend: answers each `Spawn` with the next scripted result.
struct StubSandbox;

#[derive(Default)]
struct Backend {
    replies: Mutex<VecDeque<ExecResult>>,
    seen: Mutex<Vec<ExecRequest>>,
}

impl Actor for StubSandbox {
    type Msg = SandboxMsg;
    type State = Arc<Backend>;
    type Arguments = Arc<Backend>;

    async fn pre_start(
        &self,
        _myself: ActorRef<SandboxMsg>,
        backend: Arc<Backend>,
    ) -> Result<Arc<Backend>, ActorProcessingErr> {
        Ok(backend)
    }

    async fn handle(
        &self,
        _myself: ActorRef<SandboxMsg>,
        msg: SandboxMsg,
        backend: &mut Arc<Backend>,
    ) -> Result<(), ActorProcessingErr> {
        if let SandboxMsg::Spawn { request, reply, .. } = msg {
            lock(&backend.seen).push(*request);
            let next = lock(&backend.replies).pop_front();
            let _ = reply.send(next.ok_or_else(|| "nothing scripted".to_string()));
        }
        Ok(())
    }
}

/// A session that takes every message and does nothing with it.
struct StubSession;

impl Actor for StubSession {
    type Msg = SessionMsg;
    type State = ();
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<SessionMsg>,
        _: (),
    ) -> Result<(), ActorProcessingErr> {
        Ok(())
    }
}

fn exited(code: i32, output: &str) -> ExecResult {
    ExecResult {
        exit_code: Some(code),
        stdout: output.into(),
        stderr: String::new(),
        aggregated_output: output.into(),
        truncated_bytes: 0,
        duration: Duration::from_millis(5),
        timed_out: false,
    }
}

/// One call of the flow, with what each stub saw.
struct Harness {
    ctx: ToolContext,
    none: Arc<Backend>,
    confined: Arc<Backend>,
    events: Arc<Mutex<Vec<EventMsg>>>,
    _cwd: tempfile::TempDir,
}

/// `answer` is the user's decision to every approval request; `confined` false means no
/// confining backend exists on this machine.
async fn harness(answer: ReviewDecision, confined: bool) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path().to_path_buf();
    let mut settings = crate::thread_store::test_support::settings();
    settings.cwd = cwd.clone();
    settings.approval_policy = AskForApproval::OnRequest;
    settings.sandbox_mode = SandboxMode::WorkspaceWrite;
    let none = Arc::new(Backend::default());
    let confining = Arc::new(Backend::default());
    let (none_ref, _) = Actor::spawn(None, StubSandbox, none.clone())
        .await
        .expect("none stub");
    let (confined_ref, _) = Actor::spawn(None, StubSandbox, confining.clone())
        .await
        .expect("confined stub");
    let (session, _) = Actor::spawn(None, StubSession, ())
        .await
        .expect("session stub");
    let pending = PendingApprovals::default();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink: EventSink = {
        let events = events.clone();
        let pending = pending.clone();
        Arc::new(move |msg: EventMsg| {
            if let EventMsg::ExecApprovalRequest { call_id, .. } = &msg {
                pending.resolve(call_id, answer.clone());
            }
            lock(&events).push(msg);
        })
    };
    let thread_id = ThreadId::new();
    let hooks = TurnHooks::new(
        &settings,
        thread_id,
        TurnId(1),
        cwd.join("rollout.jsonl"),
        sink.clone(),
    );
    let services = Arc::new(TurnServices::new(sink, 4096, Arc::new(hooks)));
    let ctx = ToolContext {
        call: ToolCall {
            call_id: "call-1".into(),
            tool_name: "shell".into(),
            payload: ToolPayload::Function {
                arguments: "{}".into(),
            },
        },
        thread_id,
        session,
        command_budget: None,
        settings: Arc::new(settings),
        sandbox: none_ref,
        confined: if confined {
            Ok(confined_ref)
        } else {
            Err("no confining backend here".into())
        },
        approvals: SessionApprovals::default(),
        pending,
        services,
        editor_files: None,
    };
    Harness {
        ctx,
        none,
        confined: confining,
        events,
        _cwd: dir,
    }
}

fn command(argv: &[&str], cwd: PathBuf, escalation: bool) -> CommandRequest {
    CommandRequest {
        command: argv.iter().map(ToString::to_string).collect(),
        cwd,
        timeout: Duration::from_secs(5),
        escalation,
        justification: None,
    }
}

fn approval_requests(h: &Harness) -> usize {
    lock(&h.events)
        .iter()
        .filter(|e| matches!(e, EventMsg::ExecApprovalRequest { .. }))
        .count()
}

fn output_of(outcome: &ToolOutcome) -> String {
    let value: serde_json::Value = serde_json::from_str(&outcome.content).expect("JSON output");
    value["output"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn a_known_safe_command_runs_once_in_the_sandbox_without_asking() {
    let h = harness(ReviewDecision::Denied, true).await;
    lock(&h.confined.replies).push_back(exited(0, "a.txt\n"));
    let request = command(&["ls"], h.ctx.settings.cwd.clone(), false);
    let outcome = run(&h.ctx, &request).await;
    assert!(outcome.success, "{}", outcome.content);
    assert_eq!(output_of(&outcome), "a.txt\n");
    let seen = lock(&h.confined.seen);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].argv, vec!["ls".to_string()]);
    assert!(matches!(seen[0].profile, PermissionProfile::Managed { .. }));
    assert!(lock(&h.none.seen).is_empty());
    assert_eq!(approval_requests(&h), 0);
    // The command's begin and end go out, in that order, with its call id.
    let events = lock(&h.events);
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            EventMsg::ExecCommandBegin { call_id, .. } if call_id == "call-1" => Some("begin"),
            EventMsg::ExecCommandEnd { call_id, .. } if call_id == "call-1" => Some("end"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["begin", "end"]);
}

#[tokio::test]
async fn a_sandbox_denial_is_asked_about_once_and_run_again_without_the_sandbox() {
    let h = harness(ReviewDecision::ApprovedWithoutSandbox, true).await;
    lock(&h.confined.replies).push_back(exited(1, "curl: (7) Operation not permitted"));
    lock(&h.none.replies).push_back(exited(0, "fetched"));
    let request = command(&["curl", "example.com"], h.ctx.settings.cwd.clone(), false);
    let outcome = run(&h.ctx, &request).await;
    assert!(outcome.success, "{}", outcome.content);
    assert_eq!(output_of(&outcome), "fetched");
    assert_eq!(lock(&h.confined.seen).len(), 1);
    assert_eq!(lock(&h.none.seen).len(), 1);
    let events = lock(&h.events);
    let retries: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            EventMsg::ExecApprovalRequest { sandbox_retry, .. } => Some(sandbox_retry.is_some()),
            _ => None,
        })
        .collect();
    // Untrusted under on-request runs sandboxed first unasked; only the retry is asked.
    assert_eq!(retries, [true]);
}

#[tokio::test]
async fn a_denied_escalation_reaches_no_backend() {
    let h = harness(ReviewDecision::Denied, true).await;
    let request = command(&["rm", "-rf", "build"], h.ctx.settings.cwd.clone(), true);
    let outcome = run(&h.ctx, &request).await;
    assert!(!outcome.success);
    assert_eq!(outcome.content, REJECTED_BY_USER);
    assert_eq!(approval_requests(&h), 1);
    assert!(lock(&h.confined.seen).is_empty());
    assert!(lock(&h.none.seen).is_empty());
}

#[tokio::test]
async fn without_a_confining_backend_a_sandboxed_command_is_not_run() {
    let h = harness(ReviewDecision::Denied, false).await;
    let request = command(&["ls"], h.ctx.settings.cwd.clone(), false);
    let outcome = run(&h.ctx, &request).await;
    assert!(!outcome.success);
    assert!(
        outcome
            .content
            .contains("no sandbox available, command not run: no confining backend here"),
        "{}",
        outcome.content
    );
    assert!(lock(&h.none.seen).is_empty());
}
