//! The first start of the interactive UI in a folder: it opens outside Git, asks once whether
//! to trust the folder, and a trusted folder starts in `workspace-write` with `on-request`.

use crate::tui_tmux::Tmux;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

fn trust_file(h: &Harness) -> String {
    std::fs::read_to_string(h.home.path().join("trust.toml")).unwrap_or_default()
}

#[test]
fn a_plain_folder_opens_with_the_trust_screen_and_trusting_it_allows_writes() {
    let h = Harness::new(vec![MockResponse::text("hello")]);
    let tmux = Tmux::start_first_time(&h, "trust-yes", &[]);
    tmux.wait_for("This folder is not version controlled");
    tmux.wait_for("1. Yes, trust this folder");
    tmux.keys(&["1"]);
    tmux.wait_for("on-request · workspace-write");
    let trust = trust_file(&h);
    let dir = std::fs::canonicalize(h.workdir.path()).unwrap();
    assert!(
        trust.contains(&dir.display().to_string()) && trust.contains("\"trusted\""),
        "{trust}"
    );
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn declining_keeps_the_folder_read_only_and_is_not_asked_again() {
    let h = Harness::new(vec![MockResponse::text("hello")]);
    let tmux = Tmux::start_first_time(&h, "trust-no", &[]);
    tmux.wait_for("2. No, keep it read-only");
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("on-request · read-only");
    assert!(
        trust_file(&h).contains("\"untrusted\""),
        "{}",
        trust_file(&h)
    );
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
    drop(tmux);
    let again = Tmux::start_first_time(&h, "trust-no-again", &[]);
    again.wait_for("on-request · read-only");
    let screen = again.history();
    assert!(!screen.contains("trust this folder"), "{screen}");
    again.type_text("/quit");
    again.keys(&["Enter"]);
    assert_eq!(again.wait_exit(), 0);
}

#[test]
fn a_trusted_repository_starts_in_workspace_write_without_asking() {
    let h = Harness::new(vec![MockResponse::text("hello")]);
    std::fs::create_dir(h.workdir.path().join(".git")).unwrap();
    let dir = std::fs::canonicalize(h.workdir.path()).unwrap();
    std::fs::write(
        h.home.path().join("trust.toml"),
        format!(
            "[projects.{:?}]\ntrust_level = \"trusted\"\n",
            dir.display().to_string()
        ),
    )
    .unwrap();
    let tmux = Tmux::start_first_time(&h, "trusted-repo", &[]);
    tmux.wait_for("on-request · workspace-write");
    let screen = tmux.history();
    assert!(!screen.contains("trust this folder"), "{screen}");
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn a_config_sandbox_mode_wins_over_the_trusted_default() {
    let h = Harness::new(vec![MockResponse::text("hello")]);
    let config = h.home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("sandbox_mode = \"read-only\"\n{text}")).unwrap();
    let tmux = Tmux::start_first_time(&h, "trust-config-ro", &[]);
    tmux.wait_for("1. Yes, trust this folder");
    tmux.keys(&["1"]);
    tmux.wait_for("on-request · read-only");
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn an_untrusted_git_repository_asks_without_the_version_control_warning() {
    let h = Harness::new(vec![MockResponse::text("hello")]);
    std::fs::create_dir(h.workdir.path().join(".git")).unwrap();
    let tmux = Tmux::start_first_time(&h, "trust-git", &[]);
    tmux.wait_for("Do you trust this folder?");
    let screen = tmux.history();
    assert!(!screen.contains("not version controlled"), "{screen}");
    tmux.keys(&["Escape"]);
    assert_eq!(tmux.wait_exit(), 0);
    assert!(!trust_file(&h).contains("trusted"), "{}", trust_file(&h));
}

#[test]
fn trusting_pins_the_project_config_the_screen_listed_and_obeys_it() {
    let h = Harness::new(vec![MockResponse::text("hello")]);
    let project = h.workdir.path().join(".troupe");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("config.toml"), "model = \"qwen3-coder:30b\"\n").unwrap();
    let tmux = Tmux::start_first_time(&h, "trust-project", &[]);
    tmux.wait_for("Project files trusting pins: .troupe/config.toml");
    tmux.keys(&["1"]);
    tmux.wait_for("qwen3-coder:30b · on-request · workspace-write");
    let trust = trust_file(&h);
    assert!(
        trust.contains(".troupe/config.toml") && trust.contains("sha256"),
        "{trust}"
    );
    tmux.type_text("/quit");
    tmux.keys(&["Enter"]);
    assert_eq!(tmux.wait_exit(), 0);
}
