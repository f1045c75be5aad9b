//! `[hooks]` / `hooks.json`: Codex's format, per-layer concatenation, trust, errors, matchers.

use crate::hooks::Matcher;
use crate::project::project_files;
use crate::resolve::{load_config_in, CliOverrides};
use crate::trust::TrustStore;
use pretty_assertions::assert_eq;
use std::path::Path;
use troupe_messages::hooks::HookEventName;

const USER_HOOKS: &str = r#"
[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "echo pre"
timeout = 5

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "echo stop"
"#;

fn load(
    home: &Path,
    system: &Path,
    cwd: &Path,
) -> Result<crate::resolve::LoadedConfig, crate::error::ConfigError> {
    let cli = CliOverrides {
        cwd: Some(cwd.to_path_buf()),
        ..CliOverrides::default()
    };
    load_config_in(home, system, &cli)
}

#[test]
fn toml_groups_become_handlers_with_codex_defaults() {
    let (home, system, cwd) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::write(home.path().join("config.toml"), USER_HOOKS).unwrap();
    let settings = load(home.path(), system.path(), cwd.path())
        .unwrap()
        .settings;
    let hooks = &settings.hooks;
    assert_eq!(hooks.handlers.len(), 2);
    assert_eq!(hooks.handlers[0].event, HookEventName::PreToolUse);
    assert_eq!(hooks.handlers[0].matcher.as_deref(), Some("Bash"));
    assert_eq!(hooks.handlers[0].timeout_sec, 5);
    assert_eq!(hooks.handlers[1].event, HookEventName::Stop);
    assert_eq!(hooks.handlers[1].timeout_sec, 600);
    assert_eq!(hooks.max_stop_continuations, 3);
}

#[test]
fn hooks_json_beside_the_config_adds_to_the_toml_hooks() {
    let (home, system, cwd) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::write(home.path().join("config.toml"), USER_HOOKS).unwrap();
    std::fs::write(
        home.path().join("hooks.json"),
        r#"{"hooks":{"PostToolUse":[{"matcher":"^apply_patch$","hooks":[{"type":"command","command":"echo post"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(system.path().join("config.toml"), "max_stop_continuations = 1\n[[hooks.SessionStart]]\nhooks = [{ type = \"command\", command = \"echo sys\" }]\n").unwrap();
    let settings = load(home.path(), system.path(), cwd.path())
        .unwrap()
        .settings;
    let events: Vec<_> = settings.hooks.handlers.iter().map(|h| h.event).collect();
    // System first, then the user's config.toml, then the user's hooks.json.
    assert_eq!(
        events,
        vec![
            HookEventName::SessionStart,
            HookEventName::PreToolUse,
            HookEventName::Stop,
            HookEventName::PostToolUse
        ]
    );
    assert!(settings.hooks.handlers[3].source.ends_with("hooks.json"));
    assert_eq!(settings.hooks.max_stop_continuations, 1);
}

#[test]
fn unknown_event_key_or_type_is_an_error_naming_file_and_line() {
    let (home, system, cwd) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    for (text, needle) in [
        ("model = \"m\"\n[[hooks.PreToolUze]]\nmatcher = \"Bash\"\n", "PreToolUze"),
        ("[[hooks.Stop]]\nmatchr = \"x\"\n", "matchr"),
        ("\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"prompt\"\ncommand = \"x\"\n", "prompt"),
        ("[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"x\"\nasync = true\n", "async"),
    ] {
        std::fs::write(home.path().join("config.toml"), text).unwrap();
        let err = load(home.path(), system.path(), cwd.path()).unwrap_err().to_string();
        assert!(err.contains("config.toml:"), "{err}");
        assert!(err.contains(needle), "{err}");
    }
    std::fs::write(home.path().join("config.toml"), "").unwrap();
    std::fs::write(home.path().join("hooks.json"), r#"{"hooks":{"Nope":[]}}"#).unwrap();
    let err = load(home.path(), system.path(), cwd.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("hooks.json") && err.contains("Nope"), "{err}");
}

#[test]
fn an_invalid_matcher_regex_is_an_error() {
    let (home, system, cwd) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    std::fs::write(
        home.path().join("config.toml"),
        "[[hooks.PreToolUse]]\nmatcher = \"mcp__(\"\nhooks = [{ type = \"command\", command = \"x\" }]\n",
    )
    .unwrap();
    let err = load(home.path(), system.path(), cwd.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("matcher") && err.contains("mcp__("), "{err}");
}

#[test]
fn project_hooks_only_from_a_trusted_pinned_config() {
    let (home, system) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    std::fs::create_dir_all(project.path().join(".troupe")).unwrap();
    std::fs::write(project.path().join(".troupe/config.toml"), USER_HOOKS).unwrap();
    std::fs::write(
        project.path().join(".troupe/hooks.json"),
        r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"evil"}]}]}}"#,
    )
    .unwrap();
    // Untrusted: nothing from the project.
    let loaded = load(home.path(), system.path(), project.path()).unwrap();
    assert!(loaded.settings.hooks.handlers.is_empty());
    // Trusted and pinned: the config's hooks, never the unpinned hooks.json.
    let root = std::fs::canonicalize(project.path()).unwrap();
    let mut store = TrustStore::default();
    store.dirs.insert(root.clone());
    for file in project_files(&root, &root).unwrap() {
        store.files.insert(file.path, file.sha256);
    }
    store.save(home.path()).unwrap();
    let loaded = load(home.path(), system.path(), project.path()).unwrap();
    let commands: Vec<_> = loaded
        .settings
        .hooks
        .handlers
        .iter()
        .map(|h| h.command.as_str())
        .collect();
    assert_eq!(commands, vec!["echo pre", "echo stop"]);
}

#[test]
fn matchers_exact_alternatives_and_regex() {
    let exact = Matcher::parse(Some("Bash")).unwrap();
    assert!(exact.matches("Bash"));
    assert!(!exact.matches("BashX"));
    assert!(!exact.matches("apply_patch"));
    let alternatives = Matcher::parse(Some("Edit|Write|apply_patch")).unwrap();
    assert!(alternatives.matches("apply_patch"));
    assert!(!alternatives.matches("Bash"));
    let regex = Matcher::parse(Some("mcp__memory__.*")).unwrap();
    assert!(regex.matches("mcp__memory__create_entities"));
    assert!(!regex.matches("Bash"));
    let anchored = Matcher::parse(Some("^apply_patch$")).unwrap();
    assert!(anchored.matches("apply_patch"));
    assert!(!anchored.matches("apply_patch2"));
    for any in [None, Some(""), Some("*")] {
        assert!(Matcher::parse(any).unwrap().matches("anything"));
    }
}
