//! Helpers for tests that drive the actor runtime directly (no binary).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use troupe_actors::runtime::ThreadClient;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{
    ContextSettings, ProviderSettings, SessionSettings, ShellEnvPolicy, WireApi,
};
use troupe_mock_model::MockModel;

/// Settings pointing at `mock`, no retries, no sandbox, no approvals.
pub fn settings(mock: &MockModel, home: &Path, cwd: &Path) -> SessionSettings {
    SessionSettings {
        model: "mock-model".into(),
        provider: ProviderSettings {
            id: "mock".into(),
            name: "Mock".into(),
            base_url: mock.base_url(),
            wire_api: WireApi::Responses,
            env_key: None,
            http_headers: BTreeMap::new(),
            request_max_retries: 0,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 5_000,
            request_timeout_ms: 5_000,
            stream_max_bytes: troupe_messages::settings::DEFAULT_STREAM_MAX_BYTES,
            stream_max_duration_ms: troupe_messages::settings::DEFAULT_STREAM_MAX_DURATION_MS,
        },
        cwd: cwd.to_path_buf(),
        approval_policy: AskForApproval::Never,
        sandbox_mode: SandboxMode::DangerFullAccess,
        sandbox: Default::default(),
        base_instructions: "test".into(),
        tool_output_max_bytes: 4096,
        default_shell_timeout_ms: 60_000,
        troupe_home: home.to_path_buf(),
        rollout_fsync: Default::default(),
        context: ContextSettings {
            project_doc_max_bytes: 32 * 1024,
            project_doc_fallback_filenames: Vec::new(),
            project_root_markers: vec![".git".into()],
            model_context_window: None,
            auto_compact_token_limit: None,
            reasoning_effort: None,
            shell_env: ShellEnvPolicy {
                inherit: "all".into(),
                ..ShellEnvPolicy::default()
            },
            collaboration_mode: Default::default(),
            max_compactions_per_turn: troupe_messages::settings::DEFAULT_MAX_COMPACTIONS_PER_TURN,
            max_requests_per_turn: troupe_messages::settings::DEFAULT_MAX_REQUESTS_PER_TURN,
        },
        tools: Default::default(),
        // Runtime tests see exactly the tools they register (sub-agent tests use `exec`).
        agents: troupe_messages::agents::AgentSettings {
            enabled: false,
            ..Default::default()
        },
    }
}

pub fn say(text: &str) -> Op {
    Op::UserInput {
        items: vec![UserInput::Text { text: text.into() }],
    }
}

/// Events until one matches, with a generous deadline so a hang fails instead of blocking.
pub async fn until(
    thread: &mut ThreadClient,
    mut pred: impl FnMut(&EventMsg) -> bool,
) -> Vec<EventMsg> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), thread.next_event())
            .await
            .expect("event within 30 s")
            .expect("thread still open");
        let done = pred(&event.msg);
        seen.push(event.msg);
        if done {
            return seen;
        }
    }
}

pub fn is_turn_end(msg: &EventMsg) -> bool {
    matches!(
        msg,
        EventMsg::TurnComplete { .. } | EventMsg::TurnAborted { .. }
    )
}

/// Interrupts the running turn and returns its events up to the end, asserting that the end
/// is `TurnAborted { Interrupted }`.
pub async fn interrupt(thread: &mut ThreadClient) -> Vec<EventMsg> {
    thread.submit(Op::Interrupt).unwrap();
    let events = until(thread, is_turn_end).await;
    assert!(
        matches!(
            events.last(),
            Some(EventMsg::TurnAborted {
                reason: AbortReason::Interrupted,
                ..
            })
        ),
        "{events:?}"
    );
    events
}
