//! Config-side parity with Codex (issue 19), through the real binary: feature flags,
//! `--strict-config`, `--ignore-user-config`, `--ignore-rules`, `--trust`, profile files,
//! `notify`, `developer_instructions`, `model_verbosity`, `history`, and completions.

use serde_json::Value;
use std::process::Output;
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, stdout, tool_outputs, Harness};

fn assert_fails_with(out: &Output, expected: &str) {
    assert!(!out.status.success(), "succeeded: {}", stderr(out));
    let err = stderr(out);
    assert!(err.contains(expected), "expected `{expected}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

fn add_config(h: &Harness, extra: &str) {
    let path = h.home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    // Top-level keys must come before the first table.
    text.insert_str(0, extra);
    std::fs::write(path, text).unwrap();
}

#[test]
fn enable_and_disable_switch_real_features_and_unknown_ones_are_errors() {
    let h = Harness::new(vec![MockResponse::text("a"), MockResponse::text("b")]);
    assert!(h.exec(&["--enable", "unified_exec", "hi"]).status.success());
    let names = tool_names(&h.mock.requests()[0].body);
    assert!(names.contains(&"exec_command".to_string()), "{names:?}");
    assert!(h.exec(&["--disable", "multi_agent", "hi"]).status.success());
    let names = tool_names(&h.mock.requests()[1].body);
    assert!(names.contains(&"shell".to_string()), "{names:?}");
    assert!(!names.contains(&"spawn_agent".to_string()), "{names:?}");
    assert_fails_with(
        &h.exec(&["--enable", "warp_drive", "hi"]),
        "--enable warp_drive: unknown feature; known features: apply_patch_freeform, multi_agent, unified_exec",
    );
    assert_eq!(h.mock.request_count(), 2);
}

#[test]
fn features_list_shows_each_flag_and_its_state_under_config() {
    let h = Harness::new(vec![]);
    let path = h.home.path().join("config.toml");
    let text = std::fs::read_to_string(&path).unwrap() + "\n[features]\nunified_exec = true\n";
    std::fs::write(path, text).unwrap();
    let out = h.command().args(["features", "list"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let state = |name: &str| {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(2).unwrap().to_string()
    };
    assert_eq!(state("unified_exec"), "true");
    assert_eq!(state("multi_agent"), "true");
    let out = h
        .command()
        .args(["features", "list", "--disable", "unified_exec"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("unified_exec"));
    let line = stdout(&out)
        .lines()
        .find(|l| l.starts_with("unified_exec"))
        .unwrap()
        .to_string();
    assert!(line.contains("false"), "{line}");
}

#[test]
fn strict_config_turns_unknown_keys_and_features_into_errors() {
    let h = Harness::new(vec![MockResponse::text("a")]);
    add_config(&h, "modle = \"typo\"\n\n");
    let out = h.exec(&["hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown key `modle`"),
        "{}",
        stderr(&out)
    );
    assert_fails_with(&h.exec(&["--strict-config", "hi"]), "--strict-config: ");
    assert_fails_with(
        &h.exec(&["--strict-config", "-c", "features.warp=true", "hi"]),
        "unknown feature `warp`",
    );
    assert_eq!(h.mock.request_count(), 1);
}

#[test]
fn ignore_user_config_skips_troupe_home_config() {
    let h = Harness::new(vec![MockResponse::text("a")]);
    // Without the user config the provider is the built-in `openai`, whose key is unset.
    let out = h
        .command()
        .env_remove("OPENAI_API_KEY")
        .args([
            "exec",
            "--skip-git-repo-check",
            "--ignore-user-config",
            "hi",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_fails_with(&out, "OPENAI_API_KEY");
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn profile_is_also_read_from_name_config_toml() {
    let h = Harness::new(vec![MockResponse::text("a")]);
    std::fs::write(
        h.home.path().join("fast.config.toml"),
        "model = \"profile-model\"\n",
    )
    .unwrap();
    let out = h.exec(&["-p", "fast", "hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(h.mock.requests()[0].body["model"], "profile-model");
    assert_fails_with(&h.exec(&["-p", "../x", "hi"]), "is not a profile name");
    assert_fails_with(
        &h.exec(&["-p", "nope", "hi"]),
        "profile `nope` is not defined",
    );
}

#[test]
fn ignore_rules_loads_no_rules_file() {
    let script = ["bash", "-c", "rm victim"];
    let h = Harness::new(vec![
        MockResponse::shell("c1", &script),
        MockResponse::text("a"),
        MockResponse::shell("c2", &script),
        MockResponse::text("b"),
    ]);
    std::fs::create_dir_all(h.home.path().join("rules")).unwrap();
    std::fs::write(
        h.home.path().join("rules/keep.rules"),
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"keep files\")\n",
    )
    .unwrap();
    let victim = h.workdir.path().join("victim");
    std::fs::write(&victim, "x").unwrap();
    assert!(h.exec(&["-a", "never", "go"]).status.success());
    assert!(victim.exists());
    assert!(tool_outputs(&h.mock.requests()[1].body)[0].contains("keep files"));
    let out = h.exec(&["-a", "never", "--ignore-rules", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!victim.exists(), "the forbidden rule still applied");
}

#[test]
fn trust_records_the_project_as_trusted() {
    let h = Harness::new(vec![MockResponse::text("a")]);
    let out = h.exec(&["--trust", "hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "a");
    let trust = std::fs::read_to_string(h.home.path().join("trust.toml")).unwrap();
    let dir = std::fs::canonicalize(h.workdir.path()).unwrap();
    assert!(trust.contains(dir.to_str().unwrap()), "{trust}");
}

#[test]
fn developer_instructions_and_model_verbosity_reach_the_request() {
    let h = Harness::new(vec![MockResponse::text("a")]);
    add_config(
        &h,
        "developer_instructions = \"Always answer in haiku.\"\nmodel_verbosity = \"high\"\n\n",
    );
    assert!(h.exec(&["hi"]).status.success());
    let body = &h.mock.requests()[0].body;
    assert_eq!(body["text"]["verbosity"], "high");
    let developer: Vec<String> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["role"] == "developer")
        .map(|i| i["content"][0]["text"].as_str().unwrap().to_string())
        .collect();
    assert!(
        developer.iter().any(|t| t == "Always answer in haiku."),
        "{developer:?}"
    );
    assert_fails_with(
        &h.exec(&["-c", "model_verbosity=loud", "hi"]),
        "model_verbosity",
    );
}

#[test]
fn notify_runs_with_codex_payload_when_the_turn_completes() {
    let h = Harness::new(vec![MockResponse::text("all done")]);
    let out_file = h.workdir.path().join("notified.json");
    add_config(
        &h,
        &format!(
            "notify = [\"bash\", \"-c\", \"printf %s \\\"$1\\\" > {}\", \"notify\"]\n\n",
            out_file.display()
        ),
    );
    let out = h.exec(&["--json", "ship it"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !out_file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    let payload: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(payload["type"], "agent-turn-complete");
    assert_eq!(payload["last-assistant-message"], "all done");
    assert_eq!(payload["input-messages"][0], "ship it");
    let thread = troupe_test_support::json_lines(&out)[0]["thread_id"].clone();
    assert_eq!(payload["thread-id"], thread);
    assert_fails_with(&h.exec(&["-c", "notify=[\"\"]", "hi"]), "`notify`");
}

#[test]
fn history_records_prompts_unless_turned_off() {
    let h = Harness::new(vec![MockResponse::text("a"), MockResponse::text("b")]);
    assert!(h.exec(&["first prompt"]).status.success());
    let text = std::fs::read_to_string(h.home.path().join("history.jsonl")).unwrap();
    let entry: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(entry["text"], "first prompt");
    assert!(entry["session_id"].is_string() && entry["ts"].is_u64());
    assert!(h
        .exec(&["-c", "history.persistence=\"none\"", "second"])
        .status
        .success());
    let after = std::fs::read_to_string(h.home.path().join("history.jsonl")).unwrap();
    assert_eq!(after, text);
    assert_fails_with(
        &h.exec(&["-c", "history.persistence=\"some\"", "x"]),
        "history.persistence",
    );
}

#[test]
fn completion_scripts_for_each_shell() {
    let h = Harness::new(vec![]);
    for (shell, marker) in [
        ("bash", "_troupe()"),
        ("zsh", "#compdef troupe"),
        ("fish", "complete -c troupe"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[troupe]"),
    ] {
        let out = h.command().args(["completion", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        assert!(stdout(&out).contains(marker), "{shell}");
        assert!(stdout(&out).contains("exec"), "{shell}");
    }
    let out = h.command().args(["completion", "tcsh"]).output().unwrap();
    assert_fails_with(&out, "tcsh");
}
