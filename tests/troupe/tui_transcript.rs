//! The transcript overlay (Ctrl+O): a long command's cell is folded (`+ N lines (Ctrl+O to
//! expand)`), the overlay shows every line full screen, scrolls, searches with `/`, and Esc
//! gives the main screen back as it was.

use crate::tui_tmux::Tmux;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

#[test]
fn ctrl_o_opens_the_whole_transcript_with_search() {
    let h = Harness::new(vec![
        MockResponse::shell(
            "k1",
            &[
                "sh",
                "-c",
                "for i in $(seq 1 60); do echo out-line-$i; done",
            ],
        ),
        MockResponse::text("printed sixty lines"),
    ]);
    let tmux = Tmux::start(
        &h,
        "transcript",
        &["-s", "danger-full-access", "print them"],
    );
    tmux.wait_for("printed sixty lines");
    let seen = tmux.wait_for("turn complete");
    assert!(seen.contains("+ 55 lines (Ctrl+O to expand)"), "{seen}");
    assert!(!seen.contains("out-line-7\n"), "{seen}");
    tmux.keys(&["C-o"]);
    let screen = tmux.wait_on_screen("transcript · ");
    // Opened at the end: the answer and the last lines.
    assert!(screen.contains("printed sixty lines"), "{screen}");
    tmux.keys(&["Home"]);
    let screen = tmux.wait_on_screen("› print them");
    assert!(screen.contains("│ out-line-1"), "{screen}");
    tmux.keys(&["PageDown"]);
    tmux.wait_on_screen("│ out-line-30");
    // Search: the match is brought into view and counted.
    tmux.keys(&["Home"]);
    tmux.type_text("/out-line-47");
    tmux.wait_on_screen("/out-line-47");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_on_screen("search `out-line-47`: 1 matching line");
    assert!(screen.contains("│ out-line-47"), "{screen}");
    // Esc: the main screen as it was, the composer ready.
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_on_screen("Ask troupe to do something");
    assert!(!screen.contains("transcript · "), "{screen}");
    assert!(tmux.history().contains("+ 55 lines (Ctrl+O to expand)"));
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
