//! Rollout files for the store's tests.

use crate::rollout_recorder::encode;
use std::path::{Path, PathBuf};
use troupe_messages::events::EventMsg;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::items::ResponseItem;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::rollout::{
    RolloutLine, RolloutRecord, SessionMeta, TurnContextRecord, ROLLOUT_FORMAT_VERSION,
};
use troupe_messages::settings::{
    ContextSettings, ProviderSettings, SessionSettings, ShellEnvPolicy, WireApi,
};
use troupe_messages::usage::TokenUsage;

pub fn settings() -> SessionSettings {
    SessionSettings {
        model: "m".into(),
        provider: ProviderSettings {
            id: "p".into(),
            name: "P".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            wire_api: WireApi::Responses,
            env_key: None,
            http_headers: Default::default(),
            request_max_retries: 0,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 1000,
            request_timeout_ms: 1000,
            stream_max_bytes: troupe_messages::settings::DEFAULT_STREAM_MAX_BYTES,
            stream_max_duration_ms: troupe_messages::settings::DEFAULT_STREAM_MAX_DURATION_MS,
        },
        cwd: "/w".into(),
        approval_policy: AskForApproval::Never,
        sandbox_mode: SandboxMode::DangerFullAccess,
        sandbox: Default::default(),
        base_instructions: "be brief".into(),
        tool_output_max_bytes: 1000,
        default_shell_timeout_ms: 1000,
        troupe_home: "/h".into(),
        context: ContextSettings {
            project_doc_max_bytes: 0,
            project_doc_fallback_filenames: Vec::new(),
            project_root_markers: Vec::new(),
            model_context_window: None,
            auto_compact_token_limit: None,
            reasoning_effort: None,
            shell_env: ShellEnvPolicy::default(),
            collaboration_mode: Default::default(),
            max_compactions_per_turn: troupe_messages::settings::DEFAULT_MAX_COMPACTIONS_PER_TURN,
            max_requests_per_turn: troupe_messages::settings::DEFAULT_MAX_REQUESTS_PER_TURN,
        },
        rollout_fsync: Default::default(),
        tools: Default::default(),
        agents: Default::default(),
    }
}

fn line(second: u64, record: RolloutRecord) -> RolloutLine {
    RolloutLine {
        timestamp: format!("2026-01-01T00:00:{second:02}.000Z"),
        record,
    }
}

/// Lines of a thread with `turns` completed turns (prompt `turn N`, answer `answer N`).
pub fn thread_lines(id: ThreadId, turns: u64) -> Vec<RolloutLine> {
    let mut lines = vec![line(
        0,
        RolloutRecord::SessionMeta(SessionMeta {
            version: ROLLOUT_FORMAT_VERSION,
            thread_id: id,
            parent_thread_id: None,
            forked_at_turn: None,
            cwd: "/w".into(),
            model: "m".into(),
            model_provider: "p".into(),
            instructions_digest: None,
            cli_version: "0.1.0".into(),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            git: None,
            agent: None,
        }),
    )];
    for n in 1..=turns {
        let turn_id = TurnId(n);
        lines.push(line(
            n,
            RolloutRecord::TurnContext(TurnContextRecord {
                turn_id,
                settings: Box::new(settings()),
            }),
        ));
        lines.push(line(
            n,
            RolloutRecord::ResponseItem(ResponseItem::user_text(format!("turn {n}"))),
        ));
        lines.push(line(
            n,
            RolloutRecord::Event(EventMsg::TurnStarted { turn_id }),
        ));
        lines.push(line(
            n,
            RolloutRecord::ResponseItem(ResponseItem::Message {
                id: None,
                role: troupe_messages::items::Role::Assistant,
                content: vec![troupe_messages::items::ContentItem::OutputText {
                    text: format!("answer {n}"),
                }],
            }),
        ));
        lines.push(line(
            n,
            RolloutRecord::Event(EventMsg::TurnComplete {
                turn_id,
                last_agent_message: None,
                usage: TokenUsage::default(),
            }),
        ));
    }
    lines
}

/// Writes a thread with `turns` turns under `home/sessions/2026/01/01/`.
pub fn write_thread(home: &Path, turns: u64) -> (ThreadId, PathBuf) {
    let id = ThreadId::new();
    let dir = home.join("sessions/2026/01/01");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rollout-2026-01-01T00-00-00-{id}.jsonl"));
    std::fs::write(&path, encode(&thread_lines(id, turns)).unwrap()).unwrap();
    (id, path)
}
