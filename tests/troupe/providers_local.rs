//! Local servers and credentials through the real binary: `--oss` / `--local-provider`
//! against the mock's Chat endpoint, `troupe models`, `troupe login --with-api-key` /
//! `logout`, and an API key that never shows up in output, logs, rollouts or errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support as support;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};
use support::{stderr, stdout, Harness, KEY_VAR};
use troupe_mock_model::{error_body, MockResponse, MODELS};

fn run_with_stdin(mut cmd: Command, stdin: &str) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn exec_cmd(h: &Harness, args: &[&str]) -> Command {
    let mut cmd = h.command();
    cmd.args(["exec", "--skip-git-repo-check", "-s", "danger-full-access"])
        .args(args)
        .stdin(Stdio::null());
    cmd
}

fn output(mut cmd: Command) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.output().unwrap()
}

#[test]
fn oss_talks_chat_to_the_local_server_without_a_key() {
    let h = Harness::new(vec![MockResponse::text("local hello")]);
    let mut cmd = exec_cmd(&h, &["--oss", "hi"]);
    cmd.env("TROUPE_OSS_BASE_URL", h.mock.base_url());
    let out = output(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("local hello"));
    let requests = h.mock.requests();
    assert_eq!(requests[0].method, "GET", "the server is checked first");
    assert_eq!(requests[0].path, "/v1/models");
    assert_eq!(requests[1].path, "/v1/chat/completions");
    assert_eq!(requests[1].body["model"], "gpt-oss:20b");
    assert!(requests[1].header("authorization").is_none());
}

#[test]
fn local_provider_picks_the_server_and_the_port_is_configurable() {
    let h = Harness::new(vec![MockResponse::text("from vllm")]);
    let port = h.mock.addr().port().to_string();
    let mut cmd = exec_cmd(
        &h,
        &["--local-provider", "vllm", "-m", "qwen3-coder:30b", "hi"],
    );
    cmd.env("TROUPE_OSS_PORT", &port);
    let out = output(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(h.mock.requests()[1].body["model"], "qwen3-coder:30b");
    assert!(!stderr(&out).contains("does not list"), "{}", stderr(&out));
}

#[test]
fn oss_without_a_server_fails_before_starting_with_a_clear_message() {
    let h = Harness::new(vec![]);
    // Port 9 (discard) has no listener on a test machine.
    let mut cmd = exec_cmd(&h, &["--oss", "hi"]);
    cmd.env("TROUPE_OSS_PORT", "9");
    let out = output(cmd);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("no local model server answers for provider `oss` at http://127.0.0.1:9/v1")
            && err.contains("ollama serve"),
        "{err}"
    );
    assert!(h.rollouts().is_empty(), "no thread was started");
}

#[test]
fn models_lists_the_providers_models() {
    let h = Harness::new(vec![]);
    let mut cmd = h.command();
    cmd.args(["models", "--provider", "mock"]);
    let out = output(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), MODELS);
    let request = &h.mock.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    // An unknown provider is named.
    let mut cmd = h.command();
    cmd.args(["models", "--provider", "nope"]);
    let out = output(cmd);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("model provider `nope` is not defined"));
}

#[test]
fn login_stores_a_private_key_the_environment_wins_and_logout_removes_it() {
    let h = Harness::new(vec![
        MockResponse::text("with the stored key"),
        MockResponse::text("with the env key"),
    ]);
    let mut login = h.command();
    login.env_remove(KEY_VAR).args(["login", "--with-api-key"]);
    let out = run_with_stdin(login, "sk-stored-0123456789\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let auth = h.home.path().join("auth.json");
    let mode = std::fs::metadata(&auth).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(!stdout(&out).contains("sk-stored"), "the key is not echoed");

    let mut cmd = exec_cmd(&h, &["hi"]);
    cmd.env_remove(KEY_VAR);
    let out = output(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = output(exec_cmd(&h, &["hi"])); // KEY_VAR=test-key is set
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = h.mock.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-stored-0123456789")
    );
    assert_eq!(requests[1].header("authorization"), Some("Bearer test-key"));

    let mut logout = h.command();
    logout.arg("logout");
    let out = output(logout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!auth.exists());
    let mut cmd = exec_cmd(&h, &["hi"]);
    cmd.env_remove(KEY_VAR);
    let out = output(cmd);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("troupe login --with-api-key"),
        "{}",
        stderr(&out)
    );
    // Nothing on stdin is refused.
    let mut login = h.command();
    login.args(["login", "--with-api-key"]);
    let out = run_with_stdin(login, "  \n");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no API key on stdin"));
}

/// Every file under `dir` except `auth.json`, as text.
fn files_text(dir: &std::path::Path, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_text(&path, out);
        } else if path.file_name().is_some_and(|n| n != "auth.json") {
            out.push_str(&String::from_utf8_lossy(
                &std::fs::read(&path).unwrap_or_default(),
            ));
        }
    }
}

#[test]
fn an_api_key_never_reaches_output_logs_rollouts_or_errors() {
    const CANARY: &str = "sk-canary-7f3a9c21e5";
    let echoed = error_body(
        "invalid_api_key",
        &format!("Incorrect API key provided: {CANARY}."),
        "invalid_request_error",
    );
    let h = Harness::new(vec![
        MockResponse::text("fine"),
        MockResponse::http(500, echoed.clone()),
        MockResponse::http(401, echoed),
    ]);
    let mut login = h.command();
    login.env_remove(KEY_VAR).args(["login", "--with-api-key"]);
    assert!(run_with_stdin(login, CANARY).status.success());

    let mut seen = String::new();
    let retries = "model_providers.mock.request_max_retries=1";
    for args in [
        &["--json", "-c", retries, "first"][..],
        &["-c", retries, "second"][..],
    ] {
        let mut cmd = exec_cmd(&h, args);
        cmd.env_remove(KEY_VAR).env("RUST_LOG", "trace");
        let out = output(cmd);
        seen.push_str(&stdout(&out));
        seen.push_str(&stderr(&out));
    }
    assert!(
        seen.contains("[REDACTED]"),
        "the echoed key was scrubbed: {seen}"
    );
    files_text(h.home.path(), &mut seen);
    assert!(!seen.contains(CANARY), "the key leaked");
    assert_eq!(
        h.mock.requests()[0].header("authorization"),
        Some(format!("Bearer {CANARY}").as_str())
    );
}
