//! The interactive UI's composer and thread features end to end, in tmux against the mock
//! model: prompt history across sessions, `@`/`$` completion, /plan, /permissions,
//! collapsible reasoning, the resumed transcript, "edit a previous message", and typing
//! into a sub-agent.

use crate::tui_tmux::Tmux;
use troupe_mock_model::{events, MockResponse};
use troupe_test_support::Harness;

fn last_request(h: &Harness) -> String {
    h.mock
        .requests()
        .last()
        .expect("a request")
        .body
        .to_string()
}

#[test]
fn the_prompt_history_is_written_and_read_back_across_sessions() {
    let h = Harness::new(vec![MockResponse::text("noted")]);
    std::fs::write(
        h.home.path().join("history.jsonl"),
        "{\"session_id\":\"old\",\"ts\":1,\"text\":\"typed-in-an-earlier-session\"}\n",
    )
    .expect("history");
    let tmux = Tmux::start(&h, "history", &["-s", "danger-full-access"]);
    tmux.wait_for("Ask troupe to do something");
    tmux.keys(&["Up"]);
    tmux.wait_for("› typed-in-an-earlier-session");
    tmux.keys(&["C-u"]);
    tmux.type_text("a-fresh-prompt");
    tmux.keys(&["Enter"]);
    tmux.wait_for("turn complete");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
    let history = std::fs::read_to_string(h.home.path().join("history.jsonl")).expect("read");
    let last: serde_json::Value =
        serde_json::from_str(history.lines().last().expect("a line")).expect("json");
    assert_eq!(last["text"], "a-fresh-prompt");
    assert_ne!(last["session_id"], "old");
}

#[test]
fn history_persistence_none_neither_reads_nor_writes() {
    let h = Harness::new(vec![MockResponse::text("noted")]);
    let file = h.home.path().join("history.jsonl");
    let before = "{\"session_id\":\"old\",\"ts\":1,\"text\":\"must-not-be-offered\"}\n";
    std::fs::write(&file, before).expect("history");
    let tmux = Tmux::start(
        &h,
        "history-none",
        &[
            "-s",
            "danger-full-access",
            "-c",
            "history.persistence=\"none\"",
        ],
    );
    tmux.wait_for("Ask troupe to do something");
    tmux.keys(&["Up"]);
    tmux.type_text("private-prompt");
    tmux.keys(&["Enter"]);
    tmux.wait_for("turn complete");
    assert!(!tmux.history().contains("must-not-be-offered"));
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
    assert_eq!(std::fs::read_to_string(&file).expect("read"), before);
}

#[test]
fn at_completes_a_file_path_and_dollar_a_skill() {
    let h = Harness::new(vec![MockResponse::text("read it")]);
    let work = h.workdir.path();
    std::fs::create_dir_all(work.join("src")).expect("src");
    std::fs::create_dir_all(work.join("build")).expect("build");
    std::fs::write(work.join(".gitignore"), "build/\n").expect("gitignore");
    std::fs::write(work.join("src/alpha_module.rs"), "").expect("file");
    std::fs::write(work.join("build/alpha_generated.rs"), "").expect("ignored file");
    let skill = h.home.path().join("skills/deploy-notes");
    std::fs::create_dir_all(&skill).expect("skill dir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: deploy-notes\ndescription: how to deploy\n---\nSKILL-BODY-MARKER: deploy with care\n",
    )
    .expect("skill");
    let tmux = Tmux::start(&h, "complete", &["-s", "danger-full-access"]);
    tmux.wait_for("Ask troupe to do something");
    // /mention starts a file mention.
    tmux.type_text("/mention");
    tmux.keys(&["Enter"]);
    tmux.type_text("alpha");
    let screen = tmux.wait_for("src/alpha_module.rs");
    assert!(!screen.contains("alpha_generated"), "{screen}");
    tmux.keys(&["Tab"]);
    tmux.type_text("with $deplo");
    tmux.wait_for("how to deploy");
    tmux.keys(&["Tab"]);
    tmux.wait_for("› src/alpha_module.rs with $deploy-notes");
    tmux.keys(&["Enter"]);
    tmux.wait_for("read it");
    let request = last_request(&h);
    assert!(
        request.contains("src/alpha_module.rs with $deploy-notes"),
        "{request}"
    );
    assert!(request.contains("SKILL-BODY-MARKER"), "{request}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn plan_and_permissions_change_the_next_turn() {
    let h = Harness::new(vec![MockResponse::text("here is a plan")]);
    let tmux = Tmux::start_sized(
        &h,
        "plan",
        &["-s", "danger-full-access", "-a", "never"],
        160,
        24,
    );
    tmux.wait_for("Ask troupe to do something");
    tmux.type_text("/plan");
    tmux.keys(&["Enter"]);
    tmux.wait_for("plan mode on");
    tmux.wait_for("plan mode · ");
    tmux.type_text("/permissions read-only");
    tmux.keys(&["Enter"]);
    tmux.wait_for("permissions for the next turns: sandbox read-only · approvals on-request");
    tmux.type_text("what would you do");
    tmux.keys(&["Enter"]);
    tmux.wait_for("here is a plan");
    let request = last_request(&h);
    assert!(
        request.contains("<collaboration_mode>plan</collaboration_mode>"),
        "{request}"
    );
    assert!(
        request.contains("<sandbox_mode>read-only</sandbox_mode>"),
        "{request}"
    );
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn reasoning_is_one_line_until_expanded() {
    let reasoning = "**Weighing options**\n\nline-two-of-the-reasoning\nline-three";
    let answer = MockResponse::sse(vec![
        events::created("resp_r"),
        events::reasoning_done("rs_1", reasoning),
        events::assistant_message_done("msg_r", "decided"),
        events::completed("resp_r", 100, 0, 10, 5),
    ]);
    let h = Harness::new(vec![answer]);
    let tmux = Tmux::start(&h, "reasoning", &["-s", "danger-full-access", "think"]);
    tmux.wait_for("decided");
    tmux.wait_for("turn complete");
    let screen = tmux.wait_for("(+2 lines, Ctrl+O expands)");
    assert!(!screen.contains("line-two-of-the-reasoning"), "{screen}");
    // Ctrl+O: the transcript, where reasoning is whole.
    tmux.keys(&["C-o"]);
    tmux.wait_on_screen("line-two-of-the-reasoning");
    tmux.keys(&["Escape"]);
    tmux.wait_on_screen("Ask troupe to do something");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn resume_shows_the_earlier_transcript_before_the_composer() {
    let h = Harness::new(vec![MockResponse::text("an-answer-from-before")]);
    let out = h.exec(&["a-question-from-before"]);
    assert!(out.status.success(), "{out:?}");
    let tmux = Tmux::start_sub(&h, "resume-replay", &["resume", "--last"], &[]);
    tmux.wait_for("Ask troupe to do something");
    let screen = tmux.wait_for("an-answer-from-before");
    assert!(screen.contains("› a-question-from-before"), "{screen}");
    assert!(screen.contains("turn complete"), "{screen}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn escape_twice_edits_a_previous_message_in_a_fork() {
    let h = Harness::new(vec![
        MockResponse::text("answer-one"),
        MockResponse::text("answer-two"),
        MockResponse::text("answer-after-edit"),
    ]);
    let tmux = Tmux::start(&h, "edit", &["-s", "danger-full-access", "first-message"]);
    tmux.wait_for("answer-one");
    tmux.wait_for("turn complete");
    tmux.type_text("second-message");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answer-two");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Esc again to edit a previous message");
    tmux.keys(&["Escape"]);
    tmux.wait_for("edit a previous message · ");
    tmux.wait_for("turn   2  second-message");
    tmux.keys(&["Enter"]);
    tmux.wait_for("── edit 2");
    tmux.wait_for("› second-message");
    tmux.type_text(" edited");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answer-after-edit");
    let request = last_request(&h);
    assert!(request.contains("first-message"), "{request}");
    assert!(request.contains("answer-one"), "{request}");
    assert!(request.contains("second-message edited"), "{request}");
    assert!(!request.contains("answer-two"), "{request}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn a_sub_agent_takes_input_typed_into_its_transcript() {
    use crate::subagents_support::{spawn_call, wait_call};
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "s1",
            "explore",
            "tui-input-child: look around",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ]);
    h.mock.route(
        "tui-input-child",
        vec![MockResponse::text("child first answer")],
    );
    // The child's next request ends with what the user typed to it.
    h.mock.route(
        "user-note-for-the-child",
        vec![MockResponse::text("child answers the user")],
    );
    let tmux = Tmux::start(&h, "agent-input", &["-s", "danger-full-access", "delegate"]);
    tmux.wait_for("root done");
    tmux.keys(&["C-t"]);
    tmux.wait_for("threads · ");
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("── /root/explore");
    tmux.wait_for("typing to a sub-agent");
    // The empty composer says whom it talks to, not "Ask troupe to do something".
    tmux.wait_for("Message /root/explore (sent to this sub-agent)");
    tmux.type_text("user-note-for-the-child");
    tmux.keys(&["Enter"]);
    tmux.wait_for("child answers the user");
    // It went to the child (its history holds its task), not to the root.
    let child_request = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("user-note-for-the-child"))
        .expect("a request with the note")
        .body
        .to_string();
    assert!(child_request.contains("tui-input-child"), "{child_request}");
    assert!(!child_request.contains("root done"), "{child_request}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
