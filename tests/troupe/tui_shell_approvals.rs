//! `!cmd` (the user's own shell command), "deny with a message" (`d`) and "open the asking
//! thread" (`o`) in the approval overlay, end to end in tmux against the mock model.

use crate::tui_tmux::Tmux;
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{tool_outputs, Harness};

fn last_request(h: &Harness) -> String {
    h.mock
        .requests()
        .last()
        .expect("a request")
        .body
        .to_string()
}

/// Waits until the visible screen no longer shows `text`.
fn wait_gone(tmux: &Tmux, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while tmux.screen().contains(text) {
        assert!(
            Instant::now() < deadline,
            "`{text}` stayed on screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn bang_runs_the_command_here_and_the_next_request_carries_it() {
    let h = Harness::new(vec![MockResponse::text("I saw your command")]);
    let tmux = Tmux::start(&h, "bang", &["-s", "read-only", "-a", "untrusted"]);
    tmux.wait_for("Ask troupe to do something");
    // Run by the user's shell (the arithmetic is the shell's), unconfined although the
    // thread is read-only, in the thread's directory, without asking.
    tmux.type_text("!echo bang-marker-$((40+2)) > bang-file; cat bang-file");
    tmux.keys(&["Enter"]);
    tmux.wait_for("│ bang-marker-42");
    tmux.wait_for("exit 0");
    assert!(h.workdir.path().join("bang-file").exists());
    assert!(h.mock.requests().is_empty(), "the model was not asked");
    tmux.type_text("what did it print?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("I saw your command");
    let body = last_request(&h);
    assert!(body.contains("<user_shell_command>"), "{body}");
    assert!(body.contains("bang-marker-42"), "{body}");
    assert!(body.contains("Exit code: 0"), "{body}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
    // The rollout holds it, so a resumed thread tells the model too.
    let rollouts = walk(&h.home.path().join("sessions"));
    assert!(
        rollouts.iter().any(|text| text.contains("bang-marker-42")),
        "no rollout holds the command"
    );
}

#[test]
fn esc_kills_the_users_command_and_the_model_is_told() {
    let h = Harness::new(vec![MockResponse::text("noted the interruption")]);
    let tmux = Tmux::start(&h, "bang-esc", &["-s", "danger-full-access"]);
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("!echo started-marker; sleep 60");
    tmux.keys(&["Enter"]);
    tmux.wait_for("│ started-marker");
    tmux.wait_on_screen("Esc to interrupt");
    tmux.keys(&["Escape"]);
    tmux.wait_for("✖ killed");
    tmux.type_text("go on");
    tmux.keys(&["Enter"]);
    tmux.wait_for("noted the interruption");
    let body = last_request(&h);
    assert!(body.contains("interrupted by the user"), "{body}");
    assert!(body.contains("started-marker"), "{body}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn deny_with_a_message_is_the_calls_output_and_the_turn_goes_on() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "denied-file"]),
        MockResponse::text("fine, the other way then"),
    ]);
    let tmux = Tmux::start(
        &h,
        "deny-message",
        &["-s", "danger-full-access", "-a", "untrusted", "make a file"],
    );
    tmux.wait_for("approval needed");
    tmux.wait_on_screen("d deny and say what to do instead");
    tmux.keys(&["d"]);
    tmux.wait_on_screen("deny, and tell the model what to do instead");
    tmux.type_text("write it with other-way-marker instead");
    tmux.keys(&["Enter"]);
    tmux.wait_for("fine, the other way then");
    tmux.wait_for("turn complete");
    assert!(!h.workdir.path().join("denied-file").exists());
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 2, "sampled again after the denial");
    let outputs = tool_outputs(&requests[1].body);
    assert!(
        outputs
            .iter()
            .any(|o| o.contains("rejected by user") && o.contains("other-way-marker")),
        "{outputs:?}"
    );
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn o_opens_the_asking_sub_agent_and_esc_shows_the_approval_again() {
    use crate::subagents_support::{spawn_call, wait_call};
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "s1",
            "explore",
            "peek-child-marker: make a file",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ]);
    h.mock.route(
        "peek-child-marker",
        vec![
            MockResponse::shell("k1", &["touch", "peek-child-file"]),
            MockResponse::text("child finished"),
        ],
    );
    let tmux = Tmux::start(
        &h,
        "peek",
        &["-s", "danger-full-access", "-a", "untrusted", "delegate"],
    );
    tmux.wait_on_screen("approval needed · /root/explore");
    tmux.keys(&["o"]);
    tmux.wait_for("── /root/explore");
    tmux.wait_for("an approval is waiting: Esc shows it again");
    wait_gone(&tmux, "approval needed");
    tmux.wait_on_screen("viewing /root/explore · ");
    tmux.wait_on_screen("1 approval pending · Esc to answer");
    tmux.keys(&["Escape"]);
    tmux.wait_on_screen("approval needed · /root/explore");
    tmux.wait_for("── main");
    tmux.keys(&["y"]);
    tmux.wait_for("root done");
    assert!(h.workdir.path().join("peek-child-file").exists());
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

/// The text of every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut texts = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return texts;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            texts.extend(walk(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            texts.push(text);
        }
    }
    texts
}
