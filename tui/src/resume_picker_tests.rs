#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use troupe_messages::ids::ThreadId;
use troupe_messages::threads::ThreadStatus;
use troupe_messages::usage::TokenUsage;

const NOW: i64 = 1_780_000_000_000;

fn thread(n: u128, title: &str, cwd: &str, ago_ms: i64, task_path: Option<&str>) -> ThreadSummary {
    ThreadSummary {
        id: ThreadId(uuid::Uuid::from_u128(
            0x0192_0000_0000_7000_8000_0000_0000_0000 + n,
        )),
        title: title.into(),
        cwd: cwd.into(),
        parent: None,
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at_ms: NOW - ago_ms,
        status: ThreadStatus::Completed,
        rollout_path: format!("/home/u/.troupe/sessions/{n}.jsonl").into(),
        archived: false,
        turns: 1,
        tokens: TokenUsage::default(),
        rollout_bytes: 0,
        task_path: task_path.map(str::to_string),
        depth: u32::from(task_path.is_some()),
        nickname: None,
        model_provider: "mock".into(),
    }
}

fn items() -> Vec<ThreadSummary> {
    vec![
        thread(
            1,
            "fix the flaky test",
            "/work/project",
            3 * 86_400_000,
            None,
        ),
        thread(2, "add a --json flag", "/work/project", 5 * 60_000, None),
        thread(
            3,
            "explore the parser",
            "/work/project",
            4 * 60_000,
            Some("/root/explore"),
        ),
        thread(
            4,
            "write the release notes",
            "/work/docs",
            2 * 3_600_000,
            None,
        ),
    ]
}

#[test]
fn newest_first_sub_agents_hidden_until_tab() {
    let mut picker = ResumePicker::new(items());
    let titles: Vec<&str> = picker.visible().iter().map(|t| t.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "add a --json flag",
            "write the release notes",
            "fix the flaky test"
        ]
    );
    picker.on_key(KeyCode::Tab, KeyModifiers::NONE);
    assert_eq!(picker.visible().len(), 4);
    assert_eq!(picker.visible()[0].title, "explore the parser");
    picker.on_key(KeyCode::Tab, KeyModifiers::NONE);
    for c in "notes".chars() {
        picker.on_key(KeyCode::Char(c), KeyModifiers::NONE);
    }
    let answer = picker.on_key(KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        matches!(&answer, Some(ResumeAnswer::Resume(t)) if t.title == "write the release notes"),
        "{answer:?}"
    );
    assert_eq!(
        picker.on_key(KeyCode::Esc, KeyModifiers::NONE),
        Some(ResumeAnswer::New)
    );
    assert_eq!(
        picker.on_key(KeyCode::Char('c'), KeyModifiers::CONTROL),
        Some(ResumeAnswer::Quit)
    );
}

#[test]
fn relative_times() {
    assert_eq!(relative_time(NOW, NOW - 10_000), "just now");
    assert_eq!(relative_time(NOW, NOW - 5 * 60_000), "5m ago");
    assert_eq!(relative_time(NOW, NOW - 2 * 3_600_000), "2h ago");
    assert_eq!(relative_time(NOW, NOW - 3 * 86_400_000), "3d ago");
    assert_eq!(relative_time(NOW, NOW - 90 * 86_400_000), "2026-02-27");
}

#[test]
fn snapshots() {
    for (width, height) in crate::snapshot_review_tests::SIZES {
        let picker = ResumePicker::new(items());
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| picker.render(frame.area(), frame.buffer_mut(), NOW))
            .unwrap();
        insta::assert_snapshot!(
            format!("resume_picker_{width}x{height}"),
            terminal.backend().to_string()
        );
    }
}
