//! Rendering snapshots (insta + ratatui's TestBackend) of every cell kind, the approval
//! overlay (a sandbox retry too), the threads panel and the slash popup, at 80x24 and
//! 200x50.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app::{App, Overlay, StatusInfo};
use crate::cells::{Cell, CommandCell, NoticeKind, PatchCell};
use crate::diff;
use ratatui::backend::TestBackend;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Terminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use troupe_messages::agents::CollabCallStatus;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::tools::{FileChangeKind, PlanItem, StepStatus};
use troupe_messages::usage::TokenUsage;

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

pub(crate) fn status() -> StatusInfo {
    StatusInfo {
        model: "gpt-test".into(),
        effort: Some("high".into()),
        approval: AskForApproval::OnRequest,
        sandbox: SandboxMode::WorkspaceWrite,
        cwd: PathBuf::from("/work/project"),
        branch: Some("main".into()),
        context_window: Some(200_000),
        plan_mode: false,
    }
}

fn cells() -> Vec<(&'static str, Cell)> {
    let mut command = CommandCell::new("c1".into(), "cargo test -p demo".into());
    command.output.push("running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... \x1b[31mFAILED\x1b[0m\n\nfailures: 1\nerror: test failed\n");
    command.exit_code = Some(Some(101));
    command.duration_ms = 12_340;
    let diff_text = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn add(a: i32, b: i32) -> i32 {\n-    a - b\n+    a + b\n }\n";
    vec![
        ("user", Cell::User { text: "fix the failing test\nand explain why".into(), pending: false }),
        ("user_pending", Cell::User { text: "also update the docs".into(), pending: true }),
        (
            "assistant",
            Cell::Assistant {
                markdown: "## Plan\n\nThe bug is in `add`: it **subtracts**. See [the docs](https://example.com/add).\n\n> Tests were green before.\n\n1. fix `add`\n2. run the tests\n\n| file | change |\n|---|---|\n| src/lib.rs | `-` → `+` |\n\n```rust\n// the fix\nfn add(a: i32, b: i32) -> i32 { a + b }\n```\n".into(),
                streaming: false,
            },
        ),
        ("reasoning", Cell::Reasoning { text: "The test expects 4 from add(2, 2); the code returns 0.".into(), expanded: true }),
        (
            "reasoning_collapsed",
            Cell::Reasoning {
                text: "**Finding the bug**\n\nThe test expects 4 from add(2, 2); the code returns 0.\nSo `add` subtracts.".into(),
                expanded: false,
            },
        ),
        ("command", Cell::Command(command)),
        (
            "patch",
            Cell::Patch(PatchCell {
                call_id: "p1".into(),
                files: vec![("/work/project/src/lib.rs".into(), FileChangeKind::Update)],
                success: Some(true),
                output: String::new(),
                diffs: diff::split_files(diff_text),
            }),
        ),
        (
            "plan",
            Cell::Plan {
                explanation: Some("Fix, then verify.".into()),
                items: vec![
                    PlanItem { step: "find the bug".into(), status: StepStatus::Completed },
                    PlanItem { step: "fix add".into(), status: StepStatus::InProgress },
                    PlanItem { step: "run the tests".into(), status: StepStatus::Pending },
                ],
            },
        ),
        ("tool", Cell::Tool { name: "web_search".into(), success: Some(true), output: "3 results".into() }),
        (
            "agent",
            Cell::Agent {
                tool: "spawn_agent".into(),
                targets: vec!["0192ab34".into()],
                prompt: Some("explore the tests directory".into()),
                status: CollabCallStatus::Completed,
            },
        ),
        ("warning", Cell::Notice { kind: NoticeKind::Warning, text: "model request failed; retrying".into() }),
        ("error", Cell::Notice { kind: NoticeKind::Error, text: "the provider rejected the credentials (HTTP 401)".into() }),
        (
            "footer",
            Cell::TurnFooter {
                outcome: "turn complete".into(),
                usage: TokenUsage { input_tokens: 1200, output_tokens: 340, total_tokens: 1540, ..TokenUsage::default() },
                elapsed_ms: 65_400,
            },
        ),
    ]
}

pub(crate) fn render_cell(cell: &Cell, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| {
            frame.render_widget(
                Paragraph::new(cell.lines()).wrap(Wrap { trim: false }),
                frame.area(),
            )
        })
        .unwrap();
    terminal.backend().to_string()
}

#[test]
fn every_cell_kind() {
    for (name, cell) in cells() {
        for (width, height) in SIZES {
            insta::assert_snapshot!(
                format!("cell_{name}_{width}x{height}"),
                render_cell(&cell, width, height)
            );
        }
    }
}

/// An app whose main thread ran a turn, with a sub-agent working under it.
pub(crate) fn busy_app(now: Instant) -> App {
    let mut app = App::new(status());
    app.add_root(0, "main".into(), now);
    let main_id = ThreadId(uuid_from(1));
    let child_id = ThreadId(uuid_from(2));
    let configured = EventMsg::SessionConfigured {
        thread_id: main_id,
        model: "gpt-test".into(),
        model_provider: "openai".into(),
        cwd: "/work/project".into(),
        approval_policy: AskForApproval::OnRequest,
        sandbox_mode: SandboxMode::WorkspaceWrite,
        rollout_path: "/home/u/.troupe/sessions/x.jsonl".into(),
    };
    app.on_event(0, configured, now);
    app.on_event(0, EventMsg::TurnStarted { turn_id: TurnId(1) }, now);
    app.on_event(
        0,
        EventMsg::TokenCount {
            last: TokenUsage {
                input_tokens: 50_000,
                output_tokens: 1000,
                total_tokens: 51_000,
                ..TokenUsage::default()
            },
            total: TokenUsage {
                input_tokens: 50_000,
                output_tokens: 1000,
                total_tokens: 51_000,
                ..TokenUsage::default()
            },
        },
        now,
    );
    let child_event = |msg| EventMsg::AgentEvent {
        thread_id: child_id,
        task_path: "/root/explore".into(),
        msg: Box::new(msg),
    };
    app.on_event(
        0,
        child_event(EventMsg::TurnStarted { turn_id: TurnId(1) }),
        now,
    );
    app.on_event(
        0,
        child_event(EventMsg::ExecCommandBegin {
            call_id: "k1".into(),
            command: vec!["rg".into(), "fn add".into()],
            cwd: "/work/project".into(),
            user_shell: false,
        }),
        now,
    );
    app.on_event(
        0,
        EventMsg::AgentMessageDelta {
            delta: "Looking at `src/lib.rs` now".into(),
        },
        now,
    );
    app
}

pub(crate) fn uuid_from(n: u128) -> uuid::Uuid {
    uuid::Uuid::from_u128(0x0192_0000_0000_7000_8000_0000_0000_0000 + n)
}

pub(crate) fn render_app(app: &App, width: u16, height: u16, now: Instant) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| crate::ui::render(app, frame, now))
        .unwrap();
    terminal.backend().to_string()
}

#[test]
fn viewport_overlays_panel_and_popup() {
    let now = Instant::now();
    let later = now + Duration::from_secs(75);
    for (width, height) in SIZES {
        let mut app = busy_app(now);
        insta::assert_snapshot!(
            format!("main_view_{width}x{height}"),
            render_app(&app, width, height, later)
        );

        app.composer.set_text("/");
        insta::assert_snapshot!(
            format!("slash_popup_{width}x{height}"),
            render_app(&app, width, height, later)
        );
        app.composer.clear();

        app.overlay = Overlay::Threads { selected: 1 };
        insta::assert_snapshot!(
            format!("threads_panel_{width}x{height}"),
            render_app(&app, width, height, later)
        );
        app.overlay = Overlay::None;

        let child = ThreadId(uuid_from(2));
        app.on_event(
            0,
            EventMsg::AgentEvent {
                thread_id: child,
                task_path: "/root/explore".into(),
                msg: Box::new(EventMsg::ExecApprovalRequest {
                    call_id: "a1".into(),
                    command: vec!["rm".into(), "-rf".into(), "build".into()],
                    cwd: "/work/project".into(),
                    reason: Some("the sandbox denied a write outside the workspace".into()),
                    sandbox_retry: None,
                }),
            },
            now,
        );
        insta::assert_snapshot!(
            format!("approval_{width}x{height}"),
            render_app(&app, width, height, later)
        );
        // `d`: deny with a message, typed in the overlay.
        let press = |app: &mut App, code| {
            app.on_key(crossterm::event::KeyEvent::new(
                code,
                crossterm::event::KeyModifiers::NONE,
            ))
        };
        press(&mut app, crossterm::event::KeyCode::Char('d'));
        for c in "keep build, run cargo clean instead".chars() {
            press(&mut app, crossterm::event::KeyCode::Char(c));
        }
        insta::assert_snapshot!(
            format!("approval_deny_message_{width}x{height}"),
            render_app(&app, width, height, later)
        );
    }
}

#[test]
fn completion_popup_and_edit_previous_message() {
    let now = Instant::now();
    let later = now + Duration::from_secs(75);
    for (width, height) in SIZES {
        let mut app = busy_app(now);
        app.files = vec![
            "Cargo.toml".into(),
            "src/lib.rs".into(),
            "src/main.rs".into(),
            "tests/add.rs".into(),
        ];
        app.skills = vec![crate::completion::SkillEntry {
            name: "release-notes".into(),
            description: "write the release notes from the git log".into(),
        }];
        app.composer.set_text("look at @lib");
        insta::assert_snapshot!(
            format!("file_completion_{width}x{height}"),
            render_app(&app, width, height, later)
        );
        app.composer.set_text("use $rel");
        insta::assert_snapshot!(
            format!("skill_completion_{width}x{height}"),
            render_app(&app, width, height, later)
        );
        app.composer.clear();
        app.status.plan_mode = true;
        app.threads[0].view.prompts = vec![
            (1, "fix the failing test".into()),
            (2, "now explain why".into()),
        ];
        app.overlay = Overlay::Backtrack { selected: 1 };
        insta::assert_snapshot!(
            format!("edit_previous_{width}x{height}"),
            render_app(&app, width, height, later)
        );
    }
}

#[test]
fn trust_screen() {
    use crate::trust_screen::{render_trust, TrustChoice, TrustQuestion};
    let plain = TrustQuestion {
        dir: PathBuf::from("/home/me/scratch"),
        version_controlled: false,
        project_files: Vec::new(),
    };
    let repo = TrustQuestion {
        dir: PathBuf::from("/home/me/app"),
        version_controlled: true,
        project_files: vec![PathBuf::from("/home/me/app/.troupe/config.toml")],
    };
    for (width, height) in SIZES {
        for (name, question, selected) in [("plain", &plain, 0), ("repo", &repo, 1)] {
            let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
            terminal
                .draw(|frame| {
                    render_trust(
                        question,
                        TrustChoice { selected },
                        frame.area(),
                        frame.buffer_mut(),
                    )
                })
                .unwrap();
            insta::assert_snapshot!(
                format!("trust_{name}_{width}x{height}"),
                terminal.backend().to_string()
            );
        }
    }
}

#[test]
fn shortcut_sheet() {
    let cell = Cell::Notice {
        kind: NoticeKind::Info,
        text: crate::shortcuts::sheet(),
    };
    for (width, height) in SIZES {
        insta::assert_snapshot!(
            format!("shortcuts_{width}x{height}"),
            render_cell(&cell, width, height)
        );
    }
}

#[test]
fn sandbox_retry_asks_for_the_one_thing_missing() {
    let now = Instant::now();
    let later = now + Duration::from_secs(75);
    for (width, height) in SIZES {
        let mut app = busy_app(now);
        app.on_event(
            0,
            EventMsg::ExecApprovalRequest {
                call_id: "r1".into(),
                command: vec!["touch".into(), "/srv/data/out.txt".into()],
                cwd: "/work/project".into(),
                reason: Some("allow writing to /srv/data for this session?".into()),
                sandbox_retry: Some(troupe_messages::permissions::SandboxRetry::Write {
                    dir: "/srv/data".into(),
                }),
            },
            now,
        );
        insta::assert_snapshot!(
            format!("sandbox_retry_{width}x{height}"),
            render_app(&app, width, height, later)
        );
    }
}
