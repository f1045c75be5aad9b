//! Settings changed in the UI carry over to `/new`, `/model` warns about a model the provider
//! does not list, and threads are named by their first message.

use crate::tui_tmux::Tmux;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

fn last_request(h: &Harness) -> String {
    h.mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.method == "POST")
        .expect("a model request")
        .body
        .to_string()
}

#[test]
fn new_keeps_the_permissions_and_the_model_chosen_in_the_ui() {
    let h = Harness::new(vec![MockResponse::text("answer in the new thread")]);
    let tmux = Tmux::start(&h, "new-keeps", &[]);
    tmux.wait_for("on-request · read-only");
    tmux.type_text("/permissions full-access");
    tmux.keys(&["Enter"]);
    tmux.wait_for("permissions for the next turns");
    tmux.type_text("/model qwen3-coder:30b");
    tmux.keys(&["Enter"]);
    tmux.wait_for("model set to qwen3-coder:30b");
    tmux.type_text("/new");
    tmux.keys(&["Enter"]);
    tmux.type_text("first task in the new thread");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answer in the new thread");
    let body = last_request(&h);
    assert!(body.contains("\"model\":\"qwen3-coder:30b\""), "{body}");
    assert!(
        body.contains("<sandbox_mode>danger-full-access</sandbox_mode>"),
        "{body}"
    );
    let screen = tmux.screen();
    assert!(screen.contains("qwen3-coder:30b"), "{screen}");
    assert!(screen.contains("danger-full-access"), "{screen}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn a_model_the_provider_does_not_list_is_refused() {
    let h = Harness::new(vec![MockResponse::text("answered by the listed model")]);
    let tmux = Tmux::start(&h, "model-unknown", &[]);
    tmux.wait_for("on-request · read-only");
    tmux.type_text("/model nonexistent-model-xyz");
    tmux.keys(&["Enter"]);
    let seen = tmux.wait_for("unknown model `nonexistent-model-xyz`");
    assert!(seen.contains("mock-model"), "{seen}");
    assert!(seen.contains("the model stays mock-model"), "{seen}");
    // A listed one is switched to, and the next turn uses it.
    tmux.type_text("/model gpt-oss:20b");
    tmux.keys(&["Enter"]);
    tmux.wait_for("model set to gpt-oss:20b");
    tmux.type_text("hello");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answered by the listed model");
    let body = last_request(&h);
    assert!(body.contains("\"model\":\"gpt-oss:20b\""), "{body}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn model_without_a_name_opens_a_picker_with_the_effort() {
    let h = Harness::new(vec![MockResponse::text("answered after the picker")]);
    let tmux = Tmux::start(&h, "model-picker", &[]);
    tmux.wait_for("on-request · read-only");
    tmux.type_text("/model");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_on_screen("↑↓ model · ←→ effort");
    assert!(screen.contains("mock-model  (current)"), "{screen}");
    assert!(screen.contains("qwen3-coder:30b"), "{screen}");
    // The last model, effort `high` (four steps right of the default).
    tmux.keys(&["Down", "Down", "Right", "Right", "Right", "Right", "Enter"]);
    tmux.wait_for("model set to qwen3-coder:30b (high)");
    tmux.wait_on_screen("qwen3-coder:30b high");
    tmux.type_text("go");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answered after the picker");
    let body = last_request(&h);
    assert!(body.contains("\"model\":\"qwen3-coder:30b\""), "{body}");
    assert!(body.contains("\"effort\":\"high\""), "{body}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn threads_are_named_by_their_first_message() {
    let h = Harness::new(vec![
        MockResponse::text("first answer"),
        MockResponse::text("second answer"),
    ]);
    let tmux = Tmux::start(&h, "thread-names", &[]);
    tmux.wait_for("on-request · read-only");
    tmux.type_text("fix the flaky login test");
    tmux.keys(&["Enter"]);
    tmux.wait_for("first answer");
    tmux.type_text("/new");
    tmux.keys(&["Enter"]);
    tmux.type_text("write the release notes");
    tmux.keys(&["Enter"]);
    tmux.wait_for("second answer");
    tmux.keys(&["C-t"]);
    tmux.wait_for("threads · ");
    let screen = tmux.screen();
    // The panel's rows (inside its border), not the "── new thread 2 ──" separator written
    // when the thread opened, before it had a message.
    let panel: Vec<&str> = screen.lines().filter(|l| l.starts_with('│')).collect();
    let rows = panel.join("\n");
    assert!(rows.contains("fix the flaky login test"), "{screen}");
    assert!(rows.contains("write the release notes"), "{screen}");
    assert!(
        !rows.contains("new thread") && !rows.contains("main"),
        "{screen}"
    );
    tmux.keys(&["Escape"]);
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn quitting_prints_the_token_usage_and_the_resume_command() {
    let h = Harness::new(vec![MockResponse::text("the answer")]);
    let tmux = Tmux::start(&h, "quit-summary", &["say something"]);
    tmux.wait_for("turn complete");
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
    let seen = tmux.history();
    assert!(
        seen.contains("Token usage: total=102 input=100 (+ 0 cached) output=2"),
        "{seen}"
    );
    let hint = seen
        .lines()
        .find(|l| l.starts_with("To continue this session, run troupe resume "))
        .unwrap_or_else(|| panic!("no resume hint:\n{seen}"));
    let id = hint.rsplit(' ').next().unwrap().trim();
    // The id it names is the thread just recorded: `troupe resume ID` would open it.
    let listed = std::process::Command::new(troupe_test_support::troupe_exe())
        .args(["list"])
        .env("TROUPE_HOME", h.home.path())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains(id), "{id} not in:\n{listed}");
}
