//! Render time of one frame with a 5,000-cell transcript (and a streaming answer live):
//! the viewport lays out only what it shows, so the transcript's size must not matter.
//! The transcript overlay over the same cells, too.
//! Run: `cargo bench -p troupe-tui --bench render`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::path::PathBuf;
use std::time::Instant;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::TurnId;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_tui::app::{App, StatusInfo};

fn app_with_transcript(cells: usize) -> App {
    let now = Instant::now();
    let mut app = App::new(StatusInfo {
        model: "gpt-bench".into(),
        effort: Some("medium".into()),
        approval: AskForApproval::OnRequest,
        sandbox: SandboxMode::WorkspaceWrite,
        cwd: PathBuf::from("/work/project"),
        branch: Some("main".into()),
        context_window: Some(200_000),
        plan_mode: false,
    });
    app.add_root(0, "main".into(), now);
    for turn in 0..(cells / 5) as u64 {
        app.on_event(
            0,
            EventMsg::TurnStarted {
                turn_id: TurnId(turn + 1),
            },
            now,
        );
        app.on_event(
            0,
            EventMsg::ExecCommandBegin {
                call_id: format!("c{turn}"),
                command: vec!["ls".into()],
                cwd: "/".into(),
                user_shell: false,
            },
            now,
        );
        app.on_event(
            0,
            EventMsg::ExecCommandEnd {
                call_id: format!("c{turn}"),
                command: vec!["ls".into()],
                exit_code: Some(0),
                aggregated_output: "a\nb\nc\n".repeat(50),
                duration_ms: 12,
                timed_out: false,
                user_shell: false,
            },
            now,
        );
        app.on_event(
            0,
            EventMsg::AgentReasoning {
                text: "thinking about it".into(),
            },
            now,
        );
        app.on_event(
            0,
            EventMsg::AgentMessage {
                message: "## Done\n\n- one `two`\n\n```rust\nfn x() {}\n```".into(),
            },
            now,
        );
        app.on_event(
            0,
            EventMsg::Warning {
                message: "note".into(),
            },
            now,
        );
    }
    app.on_event(
        0,
        EventMsg::TurnStarted {
            turn_id: TurnId(9999),
        },
        now,
    );
    app.on_event(
        0,
        EventMsg::AgentMessageDelta {
            delta: "streaming **markdown** line\n".repeat(2000),
        },
        now,
    );
    // Everything finished is in the scrollback already.
    let _ = app.take_scrollback();
    app
}

fn frame(c: &mut Criterion) {
    let app = app_with_transcript(5000);
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).expect("test terminal");
    let now = Instant::now();
    c.bench_function("frame_5000_cells_160x50", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| troupe_tui::ui::render(&app, frame, now))
                .expect("draw");
        })
    });
}

/// The same frame with an empty transcript: the baseline the 5,000 cells must not move.
fn empty_frame(c: &mut Criterion) {
    let app = app_with_transcript(0);
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).expect("test terminal");
    let now = Instant::now();
    c.bench_function("frame_empty_160x50", |b| {
        b.iter(|| {
            terminal
                .draw(|frame| troupe_tui::ui::render(&app, frame, now))
                .expect("draw");
        })
    });
}

/// A frame of the transcript overlay (Ctrl+O) over the 5,000 cells, scrolled to the middle:
/// the lines are built once, a frame lays out the visible rows only.
fn transcript_frame(c: &mut Criterion) {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let app = app_with_transcript(5000);
    let view = app.current_view();
    let mut transcript = troupe_tui::transcript::Transcript::default();
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).expect("test terminal");
    let mut draw = |transcript: &mut troupe_tui::transcript::Transcript| {
        terminal
            .draw(|frame| {
                let area = frame.area();
                transcript.refresh(view, area.width - 2);
                transcript.render(view, frame, area);
            })
            .expect("draw");
    };
    draw(&mut transcript);
    for _ in 0..500 {
        transcript.on_key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
    }
    c.bench_function("transcript_overlay_5000_cells_160x50", |b| {
        b.iter(|| draw(&mut transcript))
    });
}

criterion_group!(benches, frame, empty_frame, transcript_frame);
criterion_main!(benches);
