//! Keys a Codex user reaches for: `?` for the shortcut sheet, Tab to queue a message for
//! after the running turn.

use crate::tui_tmux::Tmux;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

#[test]
fn question_mark_on_an_empty_composer_opens_the_shortcut_sheet() {
    let h = Harness::new(vec![]);
    let tmux = Tmux::start(&h, "shortcuts", &[]);
    tmux.wait_for("Ask troupe to do something");
    tmux.keys(&["?"]);
    tmux.wait_for("keyboard shortcuts");
    let seen = tmux.wait_for("threads panel");
    assert!(
        seen.contains("Ctrl+T") && seen.contains("queue the message"),
        "{seen}"
    );
    // A `?` inside a message is just text.
    tmux.type_text("why?");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let screen = tmux.screen();
        if screen.contains("› why?") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{screen}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn tab_during_a_turn_queues_the_message_for_after_it() {
    let h = Harness::new(vec![
        // Runs until the test says so: the turn is surely running when Tab is pressed.
        MockResponse::shell("c1", &["sh", "-c", "while [ ! -f go ]; do sleep 0.1; done"]),
        MockResponse::text("first turn done"),
        MockResponse::text("answer to the queued message"),
    ]);
    let tmux = Tmux::start(&h, "tab-queue", &["-s", "danger-full-access", "start"]);
    tmux.wait_for("! -f go");
    tmux.type_text("queued-follow-up");
    tmux.keys(&["Tab"]);
    tmux.wait_for("queued for after this turn: queued-follow-up");
    std::fs::write(h.workdir.path().join("go"), "").unwrap();
    tmux.wait_for("answer to the queued message");
    let requests = h.mock.requests();
    let bodies: Vec<String> = requests.iter().map(|r| r.body.to_string()).collect();
    // Not steered into the running turn: the turn's second request does not carry it, and
    // the request that does already holds the finished turn's answer.
    let first_with = bodies
        .iter()
        .position(|b| b.contains("queued-follow-up"))
        .expect("the queued message was sent");
    assert!(bodies[first_with].contains("first turn done"), "{bodies:?}");
    assert!(!bodies[1].contains("queued-follow-up"), "{bodies:?}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
