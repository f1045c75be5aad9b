//! Absurd limits are config errors naming file, line and key.

use crate::error::ConfigError;
use crate::limits::key_line;
use crate::resolve::{load_config_in, CliOverrides};
use pretty_assertions::assert_eq;

fn load_with(home_config: &str, raw: &[&str]) -> Result<(), String> {
    let home = tempfile::tempdir().unwrap();
    let system = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), home_config).unwrap();
    let cli = CliOverrides {
        raw: raw.iter().map(std::string::ToString::to_string).collect(),
        cwd: Some(home.path().to_path_buf()),
        ..CliOverrides::default()
    };
    load_config_in(home.path(), system.path(), &cli)
        .map(|_| ())
        .map_err(|err: ConfigError| {
            err.to_string()
                .replace(&home.path().display().to_string(), "HOME")
        })
}

#[test]
fn a_window_of_one_names_file_line_and_key() {
    let err = load_with("model = \"m\"\n\nmodel_context_window = 1\n", &[]).unwrap_err();
    assert!(
        err.starts_with("HOME/config.toml:3: key `model_context_window`: 1 tokens is too small"),
        "{err}"
    );
}

#[test]
fn a_compaction_limit_of_zero_is_an_error() {
    let err = load_with("model_auto_compact_token_limit = 0\n", &[]).unwrap_err();
    assert!(
        err.starts_with("HOME/config.toml:1: key `model_auto_compact_token_limit`: 0 tokens"),
        "{err}"
    );
}

#[test]
fn a_limit_above_the_window_is_an_error_even_with_the_builtin_window() {
    let err = load_with(
        "model = \"gpt-4o\"\nmodel_auto_compact_token_limit = 200000\n",
        &[],
    )
    .unwrap_err();
    assert!(
        err.contains("config.toml:2: key `model_auto_compact_token_limit`: 200000 tokens is above the context window of `gpt-4o` (128000 tokens)"),
        "{err}"
    );
    let err = load_with(
        "model_context_window = 5000\nmodel_auto_compact_token_limit = 6000\n",
        &[],
    )
    .unwrap_err();
    assert!(
        err.contains(":2: key `model_auto_compact_token_limit`"),
        "{err}"
    );
}

#[test]
fn a_profile_or_an_override_is_named_where_it_sets_the_key() {
    let err = load_with(
        "profile = \"tiny\"\n[profiles.tiny]\nmodel_context_window = 10\n",
        &[],
    )
    .unwrap_err();
    assert!(
        err.starts_with("HOME/config.toml:3: key `profiles.tiny.model_context_window`"),
        "{err}"
    );
    let err = load_with("", &["max_requests_per_turn=0"]).unwrap_err();
    assert!(
        err.starts_with(
            "invalid -c override `max_requests_per_turn=0`: key `max_requests_per_turn`: 0"
        ),
        "{err}"
    );
    let err = load_with(
        "model_provider = \"p\"\n[model_providers.p]\nbase_url = \"http://x\"\nstream_max_bytes = 10\n",
        &[],
    )
    .unwrap_err();
    assert!(
        err.starts_with("HOME/config.toml:4: key `model_providers.p.stream_max_bytes`: 10 bytes"),
        "{err}"
    );
}

#[test]
fn an_agent_tree_beyond_what_runs_is_refused_with_the_reason() {
    let err = load_with("[agents]\nmax_depth = 1000\n", &[]).unwrap_err();
    assert!(
        err.starts_with(
            "HOME/config.toml:2: key `agents.max_depth`: 1000 is more than Troupe runs (16)"
        ),
        "{err}"
    );
    let err = load_with("", &["agents.max_threads=1000"]).unwrap_err();
    assert!(err.contains("agents.max_threads"), "{err}");
    assert!(err.contains("1000 is more than Troupe runs (64)"), "{err}");
    load_with("[agents]\nmax_depth = 16\nmax_threads = 64\n", &[]).unwrap();
}

#[test]
fn sensible_limits_load() {
    load_with(
        "model_context_window = 8000\nmodel_auto_compact_token_limit = 6000\n\
         max_compactions_per_turn = 0\nmax_requests_per_turn = 1\n",
        &[],
    )
    .unwrap();
}

#[test]
fn key_lines_follow_tables_and_dotted_keys() {
    let text = "a = 1\n\n[t]\nb = 2\nc.d = 3\n";
    assert_eq!(key_line(text, &["a"]), Some(1));
    assert_eq!(key_line(text, &["t", "b"]), Some(4));
    assert_eq!(key_line(text, &["t", "c", "d"]), Some(5));
    assert_eq!(key_line(text, &["t", "x"]), None);
}
