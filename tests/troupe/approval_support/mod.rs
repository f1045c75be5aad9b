//! Shared setup of the approval-flow tests: a mock model, a runtime, a thread whose
//! workspace and "outside" directory live under /var/tmp (workspace-write makes /tmp writable).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, ReviewDecision, UserInput};
use troupe_messages::policy::{AskForApproval, SandboxMode, SandboxSettings};
use troupe_messages::settings::SessionSettings;
use troupe_mock_model::{MockModel, MockResponse};
use troupe_test_support::tool_outputs;

pub struct Setup {
    pub mock: MockModel,
    pub runtime: Runtime,
    pub thread: ThreadClient,
    pub _home: tempfile::TempDir,
    /// The workspace (cwd), not under /tmp so that "outside" is really outside.
    pub ws: tempfile::TempDir,
    /// A directory outside every writable root.
    pub outside: tempfile::TempDir,
}

pub fn var_tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("troupe-approval-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

pub async fn setup(
    script: Vec<MockResponse>,
    policy: AskForApproval,
    mode: SandboxMode,
    rules: Option<&str>,
) -> Setup {
    setup_with(script, policy, mode, rules, |_| {}).await
}

pub async fn setup_with(
    script: Vec<MockResponse>,
    policy: AskForApproval,
    mode: SandboxMode,
    rules: Option<&str>,
    tweak: impl FnOnce(&mut SessionSettings),
) -> Setup {
    crate::use_sandbox_helper();
    let mock = MockModel::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    if let Some(rules) = rules {
        std::fs::create_dir_all(home.path().join("rules")).unwrap();
        std::fs::write(home.path().join("rules/default.rules"), rules).unwrap();
    }
    let ws = var_tmp();
    let outside = var_tmp();
    let mut settings = troupe_test_support::runtime::settings(&mock, home.path(), ws.path());
    settings.approval_policy = policy;
    settings.sandbox_mode = mode;
    settings.default_shell_timeout_ms = 20_000;
    settings.sandbox = SandboxSettings {
        exclude_slash_tmp: true,
        exclude_tmpdir_env_var: true,
        ..SandboxSettings::default()
    };
    tweak(&mut settings);
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let thread = runtime.start_thread(settings).await.unwrap();
    Setup {
        mock,
        runtime,
        thread,
        _home: home,
        ws,
        outside,
    }
}

pub fn say(text: &str) -> Op {
    Op::UserInput {
        items: vec![UserInput::Text { text: text.into() }],
    }
}

/// Runs one turn, answering each approval request with the next decision. Returns the
/// events and the number of requests seen.
pub async fn turn(s: &mut Setup, decisions: &[ReviewDecision]) -> (Vec<EventMsg>, usize) {
    s.thread.submit(say("go")).unwrap();
    let mut events = Vec::new();
    let mut asked = 0;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), s.thread.next_event())
            .await
            .expect("event within 30 s")
            .expect("thread open");
        if let EventMsg::ExecApprovalRequest { call_id, .. } = &event.msg {
            let decision = decisions
                .get(asked)
                .expect("no more approvals were expected")
                .clone();
            asked += 1;
            s.thread
                .submit(Op::ExecApproval {
                    call_id: call_id.clone(),
                    decision,
                })
                .unwrap();
        }
        let end = matches!(
            event.msg,
            EventMsg::TurnComplete { .. } | EventMsg::TurnAborted { .. }
        );
        events.push(event.msg);
        if end {
            return (events, asked);
        }
    }
}

pub fn last_outputs(s: &Setup) -> Vec<String> {
    let requests = s.mock.requests();
    tool_outputs(&requests.last().unwrap().body)
}

pub fn write_outside(dir: &Path, name: &str) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("echo x > {}/{name}", dir.display()),
    ]
}

pub fn shell(call_id: &str, argv: &[String]) -> MockResponse {
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    MockResponse::shell(call_id, &argv)
}
