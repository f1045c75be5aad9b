//! Resizing the terminal while a turn runs: the UI clears the screen and the scrollback and
//! writes the session's output again for the new size, so every line shows once and no copy
//! of the viewport (live cell, composer, status line) is left in the scrollback.

use crate::tui_tmux::Tmux;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

/// How many lines of `text` contain `needle`.
fn lines_with(text: &str, needle: &str) -> usize {
    text.lines().filter(|line| line.contains(needle)).count()
}

/// Resizes, then waits for a frame drawn at the new size: a key typed after the resize
/// shows only once the UI has drawn since (every draw reads the terminal's size first).
fn resize_and_settle(tmux: &Tmux, width: u16, height: u16) {
    tmux.resize(width, height);
    tmux.type_text("z");
    tmux.wait_on_screen("› z");
    tmux.keys(&["BSpace"]);
    tmux.wait_on_screen("Ask troupe to do something");
}

#[test]
#[ignore = "fails on an idle machine (every run, in 0.6 s): after quick resizes the viewport is drawn over the last rows written back into the scrollback (a race in tui/src/screen.rs between the resize and the rewrite); passes under load. Run with --ignored while fixing it"]
fn a_resize_during_a_turn_leaves_each_line_once_and_no_stale_viewport() {
    // The command prints a line, then waits for the test before printing the next: each
    // resize happens while its output is live in the viewport.
    // `printf` keeps the printed lines out of the command's own text.
    // The lines are long: a narrower terminal wraps them, moving the rows under them.
    let script = "pad=$(printf '%060d' 0); printf 'live-%s %s\\n' one $pad; \
                  while [ ! -e go1 ]; do sleep 0.05; done; printf 'live-%s %s\\n' two $pad; \
                  while [ ! -e go2 ]; do sleep 0.05; done; printf 'live-%s %s\\n' three $pad";
    // A first answer fills the screen, so the viewport sits at its bottom and a resize
    // moves the rows above it.
    let list: String = (1..=40).map(|i| format!("- filler row {i:02}\n")).collect();
    let h = Harness::new(vec![
        MockResponse::text(&list),
        MockResponse::shell("r1", &["sh", "-c", script]),
        MockResponse::text("printed three lines"),
    ]);
    let tmux = Tmux::start(
        &h,
        "resize",
        &["-s", "danger-full-access", "fill the screen"],
    );
    tmux.wait_for("filler row 40");
    tmux.wait_for("turn complete");
    tmux.type_text("print three lines");
    tmux.keys(&["Enter"]);
    tmux.wait_on_screen("live-one");
    resize_and_settle(&tmux, 40, 18);
    std::fs::write(h.workdir.path().join("go1"), "").expect("write go1");
    tmux.wait_on_screen("live-two");
    resize_and_settle(&tmux, 110, 30);
    resize_and_settle(&tmux, 50, 22);
    std::fs::write(h.workdir.path().join("go2"), "").expect("write go2");
    tmux.wait_for("printed three lines");
    // The turn is over once the composer's idle hint is back.
    tmux.wait_on_screen("Enter send · Ctrl+J newline");
    let seen = tmux.history();
    assert_eq!(lines_with(&seen, "turn complete"), 2, "{seen}");
    for i in 1..=40 {
        let row = format!("filler row {i:02}");
        assert_eq!(lines_with(&seen, &row), 1, "`{row}` not once in:\n{seen}");
    }
    for line in [
        "live-one",
        "live-two",
        "live-three",
        "› print three lines",
        "printed three lines",
    ] {
        assert_eq!(lines_with(&seen, line), 1, "`{line}` not once in:\n{seen}");
    }
    // One composer and one status line: the live ones.
    let composer = lines_with(&seen, "Enter send · Ctrl+J newline");
    assert_eq!(composer, 1, "{seen}");
    let status = lines_with(&seen, "danger-full-access");
    assert_eq!(status, 1, "{seen}");
    assert_eq!(lines_with(&seen, "typing queues a message"), 0, "{seen}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn the_first_frame_sits_at_the_top_with_no_empty_rows_under_it() {
    let h = Harness::new(vec![MockResponse::text("unused")]);
    let tmux = Tmux::start(&h, "firstframe", &["-s", "danger-full-access"]);
    let screen = tmux.wait_on_screen("Ask troupe to do something");
    let rows: Vec<&str> = screen.lines().collect();
    let status = rows
        .iter()
        .position(|row| row.contains("danger-full-access"))
        .expect("a status line");
    // Everything under the status line is empty: the viewport is as tall as its content.
    assert!(
        rows[status + 1..].iter().all(|row| row.trim().is_empty()),
        "{screen}"
    );
    assert!(status < 8, "the first frame is not at the top:\n{screen}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
