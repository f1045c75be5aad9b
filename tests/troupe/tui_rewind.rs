//! `/rewind` in the TUI through the real binary: a two-turn thread whose second turn writes a
//! file with a shell command; `/rewind` lists the turns newest first, previews the diff, and
//! rewinding code and conversation to before turn 2 removes the file, cuts the history (the
//! next request to the model no longer has turn 2) and puts turn 2's prompt back in the
//! composer.

use crate::tui_tmux::Tmux;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

#[test]
fn rewinding_both_to_before_turn_two_restores_the_file_and_cuts_the_history() {
    let h = Harness::new(vec![
        MockResponse::text("first answer"),
        MockResponse::shell("c2", &["sh", "-c", "echo made by turn two > made.txt"]),
        MockResponse::text("second answer"),
        MockResponse::text("answer after the rewind"),
    ]);
    let made = h.workdir.path().join("made.txt");
    let tmux = Tmux::start(
        &h,
        "rewind-both",
        &["-s", "danger-full-access", "-a", "never"],
    );
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("first prompt");
    tmux.keys(&["Enter"]);
    tmux.wait_for("first answer");
    tmux.type_text("second prompt writes a file");
    tmux.keys(&["Enter"]);
    tmux.wait_for("second answer");
    assert!(made.exists());

    tmux.type_text("/rewind");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_on_screen("Enter choose");
    // The picker is the last thing on the screen (the transcript is above it).
    let second = screen
        .rfind("second prompt writes a file")
        .expect("turn 2 listed");
    let first = screen.rfind("first prompt").expect("turn 1 listed");
    assert!(second < first, "newest first:\n{screen}");
    assert!(screen.contains("1 file"), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_on_screen("code and conversation");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_on_screen("-made by turn two");
    assert!(screen.contains("made.txt"), "{screen}");
    assert!(screen.contains("conversation: 2 turn(s) → 1"), "{screen}");
    assert!(made.exists(), "the preview writes nothing");
    tmux.keys(&["Enter"]);
    tmux.wait_for("rewound to before turn 2");
    assert!(!made.exists(), "the file turn 2 wrote is gone");

    // The prompt of turn 2 is back in the composer: sent again, it follows turn 1 only.
    tmux.keys(&["Enter"]);
    tmux.wait_for("answer after the rewind");
    let body = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.method == "POST")
        .expect("a request")
        .body
        .to_string();
    assert!(body.contains("first answer"), "{body}");
    assert!(!body.contains("second answer"), "{body}");
    assert_eq!(
        body.matches("second prompt writes a file").count(),
        1,
        "{body}"
    );
    // `/quit` rather than Ctrl+C: shown before the turn's end is handled, the answer may
    // leave the turn running, and Ctrl+C would then interrupt it instead of quitting.
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
}
