#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::cells::CommandCell;
use crossterm::event::KeyModifiers;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::time::Instant;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// A thread with a question, a 40-line command and an answer.
fn view() -> ThreadView {
    let mut view = ThreadView::new(Instant::now());
    view.push(Cell::User {
        text: "list the numbers".into(),
        pending: false,
    });
    let mut command = CommandCell::new("c1".into(), "seq 40".into());
    command.output.push(
        &(1..=40)
            .map(|n| format!("number-{n}\n"))
            .collect::<String>(),
    );
    command.exit_code = Some(Some(0));
    command.duration_ms = 20;
    view.push(Cell::Command(command));
    view.push(Cell::Assistant {
        markdown: "Forty numbers, from **number-1** to number-40.".into(),
        streaming: false,
    });
    view
}

fn draw(transcript: &mut Transcript, view: &ThreadView, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| {
            let area = frame.area();
            transcript.refresh(view, area.width - 2);
            transcript.render(view, frame, area);
        })
        .unwrap();
    terminal.backend().to_string()
}

#[test]
fn the_command_cell_folds_and_the_transcript_expands_it() {
    let view = view();
    let folded: Vec<String> = view.cells[1]
        .lines()
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    assert!(
        folded.contains(&"  + 35 lines (Ctrl+O to expand)".to_string()),
        "{folded:?}"
    );
    let mut transcript = Transcript::default();
    let screen = draw(&mut transcript, &view, 80, 60);
    for n in 1..=40 {
        assert!(screen.contains(&format!("│ number-{n} ")), "{n}:\n{screen}");
    }
}

#[test]
fn opens_at_the_end_scrolls_and_searches() {
    let view = view();
    let mut transcript = Transcript::default();
    let screen = draw(&mut transcript, &view, 80, 24);
    assert!(screen.contains("Forty numbers"), "{screen}");
    assert!(!screen.contains("list the numbers"), "{screen}");
    transcript.on_key(key(KeyCode::Home));
    let screen = draw(&mut transcript, &view, 80, 24);
    assert!(screen.contains("› list the numbers"), "{screen}");
    // `/number-33` Enter: the match is scrolled into view, `n` wraps to the next one.
    transcript.on_key(key(KeyCode::Char('/')));
    for c in "number-33".chars() {
        transcript.on_key(key(KeyCode::Char(c)));
    }
    let screen = draw(&mut transcript, &view, 80, 24);
    assert!(screen.contains("/number-33"), "{screen}");
    transcript.on_key(key(KeyCode::Enter));
    let screen = draw(&mut transcript, &view, 80, 24);
    assert!(screen.contains("│ number-33"), "{screen}");
    assert!(
        screen.contains("search `number-33`: 1 matching line"),
        "{screen}"
    );
    assert_eq!(transcript.on_key(key(KeyCode::Esc)), TranscriptKey::Close);
}

#[test]
fn snapshots() {
    let view = view();
    for (width, height) in crate::snapshot_review_tests::SIZES {
        let mut transcript = Transcript::default();
        draw(&mut transcript, &view, width, height);
        transcript.on_key(key(KeyCode::Home));
        insta::assert_snapshot!(
            format!("transcript_{width}x{height}"),
            draw(&mut transcript, &view, width, height)
        );
    }
}
