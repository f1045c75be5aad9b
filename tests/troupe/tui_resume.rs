//! `troupe resume` with no id: a picker of the recorded threads (title, when, directory),
//! newest first, sub-agents' threads hidden until Tab; Enter resumes, Esc starts a new one.

use crate::subagents_support::{spawn_call, wait_call};
use crate::tui_tmux::Tmux;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

#[test]
fn resume_without_an_id_picks_from_the_newest_with_sub_agents_hidden() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "s1",
            "explore",
            "picker-child-marker: look around",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("older thread done"),
        MockResponse::text("newer thread done"),
        MockResponse::text("answer in the resumed thread"),
    ]);
    h.mock.route(
        "picker-child-marker",
        vec![MockResponse::text("child looked around")],
    );
    let older = h.exec(&["the-older-thread with a sub-agent"]);
    assert!(older.status.success(), "{older:?}");
    let newer = h.exec(&["the-newer-thread"]);
    assert!(newer.status.success(), "{newer:?}");

    let tmux = Tmux::start_sub(&h, "resume-picker", &["resume"], &[]);
    let screen = tmux.wait_on_screen("Enter resume · Esc new thread");
    assert!(screen.contains("Tab shows 1 sub-agent thread"), "{screen}");
    assert!(screen.contains("just now"), "{screen}");
    let newer_at = screen.find("the-newer-thread").expect("newer listed");
    let older_at = screen.find("the-older-thread").expect("older listed");
    assert!(newer_at < older_at, "newest first:\n{screen}");
    assert!(!screen.contains("/root/explore"), "{screen}");
    let workdir = std::fs::canonicalize(h.workdir.path()).expect("workdir");
    assert!(screen.contains(&workdir.display().to_string()), "{screen}");
    tmux.keys(&["Tab"]);
    tmux.wait_on_screen("↳ /root/explore");
    tmux.keys(&["Tab"]);
    // Search, then resume the older one.
    tmux.type_text("older");
    let screen = tmux.wait_on_screen("search: older");
    assert!(!screen.contains("the-newer-thread"), "{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the-older-thread with a sub-agent");
    tmux.wait_for("older thread done");
    tmux.type_text("and now?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answer in the resumed thread");
    let body = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.method == "POST")
        .expect("a request")
        .body
        .to_string();
    assert!(body.contains("the-older-thread with a sub-agent"), "{body}");
    assert!(!body.contains("the-newer-thread"), "{body}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn escape_in_the_resume_picker_starts_a_new_thread() {
    let h = Harness::new(vec![MockResponse::text("fresh answer")]);
    let tmux = Tmux::start_sub(&h, "resume-picker-new", &["resume"], &[]);
    tmux.wait_on_screen("no recorded thread matches");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("hello");
    tmux.keys(&["Enter"]);
    tmux.wait_for("fresh answer");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
