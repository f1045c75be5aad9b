//! Bad input at the command line: each a clear message and a non-zero exit, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness, KEY_VAR};

fn assert_fails_with(out: &std::process::Output, expected: &str) {
    assert!(!out.status.success());
    let err = stderr(out);
    assert!(err.contains(expected), "expected `{expected}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn missing_api_key() {
    let h = Harness::new(vec![]);
    let out = h
        .command()
        .env_remove(KEY_VAR)
        .args(["exec", "--skip-git-repo-check", "hi"])
        .output()
        .unwrap();
    assert_fails_with(
        &out,
        &format!("missing API key: set the environment variable {KEY_VAR}"),
    );
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn unknown_provider() {
    let h = Harness::new(vec![]);
    let out = h.exec(&["-c", "model_provider=nope", "hi"]);
    assert_fails_with(
        &out,
        "model provider `nope` is not defined; known providers: llamacpp, lmstudio, mock, ollama, openai, oss, vllm",
    );
}

#[test]
fn invalid_override() {
    let h = Harness::new(vec![]);
    assert_fails_with(
        &h.exec(&["-c", "novalue", "hi"]),
        "invalid -c override `novalue`: expected key=value",
    );
    assert_fails_with(
        &h.exec(&["-c", "model_providers.mock.request_max_retries=lots", "hi"]),
        "config key `model_providers.mock.request_max_retries`",
    );
}

#[test]
fn malformed_config_file_names_the_line() {
    let h = Harness::new(vec![]);
    std::fs::write(
        h.home.path().join("config.toml"),
        "model = \"x\"\nmodel_provider = [1,\n",
    )
    .unwrap();
    assert_fails_with(&h.exec(&["hi"]), "config.toml: TOML parse error at line");
}

#[test]
fn unknown_wire_api_is_refused_naming_file_line_and_accepted_values() {
    let h = Harness::with_config(vec![MockResponse::text("never")], "wire_api = \"grpc\"");
    let out = h.exec(&["hi"]);
    assert_fails_with(&out, "config.toml:11: key `model_providers.mock.wire_api`");
    assert_fails_with(&out, "expected one of `responses`, `chat`, `anthropic`");
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn empty_prompt() {
    let h = Harness::new(vec![]);
    assert_fails_with(&h.exec(&["   "]), "the prompt is empty");
    assert_fails_with(&h.exec_with_stdin(&["-"], Some("")), "the prompt is empty");
}

#[test]
fn unreachable_provider() {
    let h = Harness::new(vec![MockResponse::text("unused")]);
    let out = h.exec(&[
        "-c",
        "model_providers.mock.base_url=\"http://127.0.0.1:9/v1\"",
        "-c",
        "model_providers.mock.request_max_retries=1",
        "x",
    ]);
    assert_fails_with(
        &out,
        "gave up after 2 attempts; last error: cannot reach http://127.0.0.1:9/v1",
    );
}

#[test]
fn outside_git_repo_without_skip_flag() {
    let h = Harness::new(vec![]);
    let out = h.command().args(["exec", "hi"]).output().unwrap();
    assert_fails_with(
        &out,
        "is not inside a Git repository; pass --skip-git-repo-check",
    );
}

#[test]
fn bad_cd() {
    let h = Harness::new(vec![]);
    assert_fails_with(
        &h.exec(&["--cd", "/no/such/dir", "hi"]),
        "--cd /no/such/dir: not a usable directory",
    );
}
