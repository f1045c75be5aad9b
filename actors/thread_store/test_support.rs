//! Rollout files for the store's tests.

use crate::rollout_recorder::encode;
use std::path::{Path, PathBuf};
use troupe_messages::events::EventMsg;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::items::ResponseItem;
use troupe_messages::rollout::{
    RolloutLine, RolloutRecord, SessionMeta, TurnContextRecord, ROLLOUT_FORMAT_VERSION,
};
use troupe_messages::settings::SessionSettings;
use troupe_messages::usage::TokenUsage;

pub fn settings() -> SessionSettings {
    troupe_test_support::settings::session_settings(
        "http://127.0.0.1:9/v1".into(),
        Path::new("/h"),
        Path::new("/w"),
    )
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
