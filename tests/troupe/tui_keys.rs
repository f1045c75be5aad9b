//! Keys a Codex user reaches for: `?` for the shortcut sheet, Tab to queue a message for
//! after the running turn, Up through a history holding slash commands, Ctrl+R's search.

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
    tmux.wait_on_screen("› why?");
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

#[test]
fn up_walks_past_a_slash_command_and_ctrl_r_finds_an_old_prompt() {
    let h = Harness::new(vec![
        MockResponse::text("first answer"),
        MockResponse::text("second answer"),
    ]);
    let tmux = Tmux::start(&h, "history-search", &[]);
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("alpha one");
    tmux.keys(&["Enter"]);
    tmux.wait_for("first answer");
    tmux.type_text("/status");
    tmux.keys(&["Enter"]);
    tmux.wait_on_screen("Ask troupe to do something");
    // Up recalls `/status`, and Up again goes on to the prompt before it (the command popup
    // does not take the keys of a recalled entry).
    tmux.keys(&["Up"]);
    tmux.wait_on_screen("› /status");
    tmux.keys(&["Up"]);
    tmux.wait_on_screen("› alpha one");
    tmux.keys(&["C-u"]);
    tmux.wait_on_screen("Ask troupe to do something");
    tmux.keys(&["C-r"]);
    tmux.wait_on_screen("reverse-i-search: ``");
    tmux.type_text("alp");
    let screen = tmux.wait_on_screen("reverse-i-search: `alp`");
    assert!(screen.contains("› alpha one"), "{screen}");
    // Enter keeps the match in the composer; a second Enter sends it.
    tmux.keys(&["Enter"]);
    tmux.wait_on_screen("Enter send");
    tmux.keys(&["Enter"]);
    tmux.wait_for("second answer");
    let requests = h.mock.requests();
    let last = requests.last().unwrap().body.to_string();
    assert_eq!(last.matches("alpha one").count(), 2, "{last}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
