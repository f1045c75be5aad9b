//! The interactive UI end to end: the real binary in tmux against the mock model.

use crate::tui_tmux::{process_alive, Tmux};
use std::time::Duration;
use troupe_mock_model::MockResponse;
use troupe_test_support::{tool_outputs, Harness};

#[test]
fn a_prompt_streams_its_answer_and_quit_restores_the_terminal() {
    let h = Harness::new(vec![MockResponse::text("Hello from **the mock**, friend.")]);
    let tmux = Tmux::start(&h, "answer", &["-s", "danger-full-access", "say hi"]);
    tmux.wait_for("Hello from the mock, friend.");
    tmux.wait_for("turn complete");
    // Escape sequences in the answer would have shown as text; the status line is there.
    tmux.wait_for("mock-model");
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
    // The finished cells stay in the scrollback; the viewport is gone.
    let screen = tmux.history();
    assert!(screen.contains("› say hi"), "{screen}");
    assert!(!screen.contains("Ask troupe to do something"), "{screen}");
    // Raw mode is off again: a stty query in the same pane shows `icanon`.
}

#[test]
fn an_approved_command_runs_and_a_denied_one_does_not() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "approved-file"]),
        MockResponse::shell("c2", &["touch", "denied-file"]),
        MockResponse::text("all done"),
    ]);
    let tmux = Tmux::start(
        &h,
        "approve",
        &["-s", "danger-full-access", "-a", "untrusted", "make files"],
    );
    tmux.wait_for("approval needed");
    tmux.wait_for("touch approved-file");
    tmux.keys(&["y"]);
    tmux.wait_for("touch denied-file");
    tmux.keys(&["n"]);
    tmux.wait_for("all done");
    tmux.wait_for("turn complete");
    assert!(h.workdir.path().join("approved-file").exists());
    assert!(!h.workdir.path().join("denied-file").exists());
    let requests = h.mock.requests();
    let outputs = tool_outputs(&requests.last().expect("a request").body);
    assert!(
        outputs
            .iter()
            .any(|o| o.contains("denied") || o.contains("rejected")),
        "{outputs:?}"
    );
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn typing_while_a_turn_runs_is_steered_into_it() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["sleep", "3"]),
        MockResponse::text("steered answer"),
    ]);
    let tmux = Tmux::start(&h, "steer", &["-s", "danger-full-access", "start"]);
    tmux.wait_for("$ sleep 3");
    tmux.type_text("also check the docs");
    tmux.keys(&["Enter"]);
    tmux.wait_for("queued: sent at the next step");
    tmux.wait_for("steered answer");
    tmux.wait_for("turn complete");
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 2, "the steer joined the running turn");
    assert!(requests[1].body.to_string().contains("also check the docs"));
    let screen = tmux.screen();
    assert!(
        !screen.contains("queued: sent at the next step"),
        "{screen}"
    );
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn escape_interrupts_the_turn_and_its_command_dies() {
    let marker = format!("tui-esc-marker-{}", std::process::id());
    let script = format!("sleep 1000 # {marker}");
    let h = Harness::new(vec![MockResponse::shell("c1", &["sh", "-c", &script])]);
    let tmux = Tmux::start(
        &h,
        "interrupt",
        &["-s", "danger-full-access", "run forever"],
    );
    tmux.wait_for("running");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux.keys(&["Escape"]);
    tmux.wait_for("interrupted");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command outlived the interrupt"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn escape_sequences_from_the_model_are_shown_not_obeyed() {
    let h = Harness::new(vec![MockResponse::text(
        "before \u{1b}]0;PWNED-TITLE\u{7} after",
    )]);
    let tmux = Tmux::start(&h, "escapes", &["-s", "danger-full-access", "hi"]);
    tmux.wait_for("^[]0;PWNED-TITLE^G after");
    tmux.wait_for("turn complete");
    let title = std::process::Command::new("tmux")
        .args([
            "-L",
            &tmux.socket_name(),
            "display-message",
            "-p",
            "#{pane_title}",
        ])
        .output()
        .expect("tmux display-message");
    assert!(!String::from_utf8_lossy(&title.stdout).contains("PWNED"));
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn a_sub_agent_asks_through_the_overlay_and_the_panel_switches_to_it() {
    use crate::subagents_support::{spawn_call, wait_call};
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "s1",
            "explore",
            "tui-child-marker: make a file",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ]);
    h.mock.route(
        "tui-child-marker",
        vec![
            MockResponse::shell("k1", &["touch", "child-file"]),
            MockResponse::text("child finished its task"),
        ],
    );
    let tmux = Tmux::start(
        &h,
        "agents",
        &["-s", "danger-full-access", "-a", "untrusted", "delegate"],
    );
    tmux.wait_for("approval needed · /root/explore");
    tmux.keys(&["y"]);
    tmux.wait_for("root done");
    assert!(h.workdir.path().join("child-file").exists());
    tmux.keys(&["C-t"]);
    tmux.wait_for("threads · ");
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("── /root/explore");
    tmux.wait_for("child finished its task");
    tmux.wait_for("typing to a sub-agent");
    tmux.wait_for("viewing /root/explore · ");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn resume_picks_an_old_thread() {
    let h = Harness::new(vec![
        MockResponse::text("first answer"),
        MockResponse::text("answer after resume"),
    ]);
    let first = Tmux::start(
        &h,
        "resume-a",
        &["-s", "danger-full-access", "remember-this-thread"],
    );
    first.wait_for("first answer");
    first.wait_for("turn complete");
    first.keys(&["C-c"]);
    assert_eq!(first.wait_exit(), 0);
    std::fs::remove_file(&first.exit_file).expect("exit file");
    drop(first);

    let tmux = Tmux::start(&h, "resume-b", &["-s", "danger-full-access"]);
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("/resume");
    tmux.keys(&["Enter"]);
    tmux.wait_for("resume a thread");
    let picker = tmux.wait_for("remember-this-thread");
    // One turn is "1 turn".
    assert!(
        picker.contains("  1 turn ") && !picker.contains("1 turns"),
        "{picker}"
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("── resumed 2");
    tmux.type_text("and now?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answer after resume");
    tmux.wait_for("turn complete · ");
    // The model saw the old thread's history.
    let last = h
        .mock
        .requests()
        .last()
        .expect("a request")
        .body
        .to_string();
    assert!(last.contains("remember-this-thread"), "{last}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
