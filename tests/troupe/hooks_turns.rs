//! Turn hooks through the real binary: SessionStart and UserPromptSubmit context, a blocked
//! prompt (never sent, never recorded), ch. 26's Stop hook continuation and its bound, hooks
//! that misbehave (garbage, never exiting, unknown decisions), and an untrusted project's
//! hooks never running.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::hooks_support::*;
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

#[test]
fn session_start_and_prompt_context_reach_the_model_in_order() {
    let h = Harness::new(vec![MockResponse::text("hi")]);
    let start = script(
        &h,
        "start.sh",
        "echo '{\"hookSpecificOutput\":{\"additionalContext\":\"start-ctx\"}}'\n",
    );
    let (payloads, save) = capture(&h, "prompt.jsonl");
    let prompt = script(&h, "prompt.sh", &format!("{save}echo prompt-ctx\n"));
    add_hooks(
        &h,
        &(hook("SessionStart", Some("startup"), &start, 10)
            + &hook("SessionStart", Some("resume"), "exit 2", 10)
            + &hook("UserPromptSubmit", None, &prompt, 10)),
    );
    let (lines, _) = exec_json(&h, &["hello there"]);
    let body = &h.mock.requests()[0].body;
    let developer = messages(body, "developer");
    assert!(developer.iter().any(|m| m == "start-ctx"), "{developer:?}");
    assert!(developer.iter().any(|m| m == "prompt-ctx"), "{developer:?}");
    // SessionStart context, then the prompt, then the prompt's context.
    let text = body["input"].to_string();
    let (a, b, c) = (
        text.find("start-ctx").unwrap(),
        text.find("hello there").unwrap(),
        text.find("prompt-ctx").unwrap(),
    );
    assert!(a < b && b < c, "{text}");
    let seen = captured(&payloads);
    assert_eq!(seen[0]["hook_event_name"], "UserPromptSubmit");
    assert_eq!(seen[0]["prompt"], "hello there");
    let runs = hook_runs(&lines);
    assert_eq!(
        runs.len(),
        2,
        "the resume hook does not match a new session: {runs:?}"
    );
    // The context is in the rollout too (a resume sends what the model saw).
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    assert!(rollout.contains("start-ctx") && rollout.contains("prompt-ctx"));
    assert!(
        rollout.contains("\"hook_completed\""),
        "hook runs are recorded"
    );
}

#[test]
fn a_blocked_prompt_is_never_sent_nor_recorded() {
    let h = Harness::new(vec![MockResponse::text("should not be asked")]);
    let guard = script(
        &h,
        "guard.sh",
        "grep -q SECRET && { echo 'prompt holds a secret' >&2; exit 2; }\nexit 0\n",
    );
    add_hooks(&h, &hook("UserPromptSubmit", None, &guard, 10));
    let (lines, err) = exec_json(&h, &["deploy with SECRET=hunter2"]);
    assert!(h.mock.requests().is_empty(), "nothing may reach the model");
    assert!(
        err.contains("prompt holds a secret")
            || lines
                .iter()
                .any(|l| l.to_string().contains("prompt holds a secret"))
    );
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    assert!(!rollout.contains("hunter2"), "{rollout}");
    assert_eq!(
        hook_runs(&lines),
        vec![("UserPromptSubmit".into(), "block".into())]
    );
}

#[test]
fn stop_hook_continues_the_turn_once_with_its_reason_as_the_prompt() {
    let h = Harness::new(vec![
        MockResponse::text("done?"),
        MockResponse::text("tests pass now"),
    ]);
    let (payloads, save) = capture(&h, "stop.jsonl");
    let marker = h.home.path().join("continued");
    let stop = script(
        &h,
        "stop.sh",
        &format!(
            "{save}if [ -e {m} ]; then exit 0; fi\ntouch {m}\n\
             echo '{{\"decision\":\"block\",\"reason\":\"run the tests first\"}}'\n",
            m = marker.display()
        ),
    );
    add_hooks(&h, &hook("Stop", None, &stop, 10));
    let (lines, _) = exec_json(&h, &["fix it"]);
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 2);
    let users = messages(&requests[1].body, "user");
    assert_eq!(
        users.last().map(String::as_str),
        Some("run the tests first")
    );
    let seen = captured(&payloads);
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0]["stop_hook_active"], false);
    assert_eq!(seen[0]["last_assistant_message"], "done?");
    assert_eq!(seen[1]["stop_hook_active"], true);
    assert_eq!(seen[1]["last_assistant_message"], "tests pass now");
    assert!(lines.iter().any(|l| l["type"] == "turn.completed"));
}

#[test]
fn a_stop_hook_that_blocks_forever_is_bounded() {
    let h = Harness::new(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("three"),
        MockResponse::text("never asked"),
    ]);
    let forever = script(&h, "forever.sh", "echo 'keep going' >&2\nexit 2\n");
    add_hooks(&h, &hook("Stop", None, &forever, 10));
    let (lines, err) = exec_json(&h, &["-c", "max_stop_continuations=2", "work"]);
    assert_eq!(
        h.mock.requests().len(),
        3,
        "the first answer plus two continuations"
    );
    let warned = lines
        .iter()
        .any(|l| l.to_string().contains("max_stop_continuations"));
    assert!(warned, "{lines:#?} {err}");
    assert!(lines.iter().any(|l| l["type"] == "turn.completed"));
}

#[test]
fn misbehaving_hooks_are_warnings_and_count_as_no_decision() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "ran"]),
        MockResponse::text("ok"),
    ]);
    let garbage = script(&h, "garbage.sh", "echo '{not json'\n");
    let unknown = script(&h, "unknown.sh", "echo '{\"decision\":\"perhaps\"}'\n");
    let hang = script(&h, "hang.sh", "sleep 600\n");
    let crash = script(&h, "crash.sh", "kill -9 $$\n");
    add_hooks(
        &h,
        &(hook("PreToolUse", None, &garbage, 10)
            + &hook("PreToolUse", None, &unknown, 10)
            + &hook("PreToolUse", None, &hang, 1)
            + &hook("PreToolUse", None, &crash, 10)),
    );
    let started = std::time::Instant::now();
    let (lines, _) = exec_json(&h, &["touch"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(
        h.workdir.path().join("ran").exists(),
        "no decision: the command runs"
    );
    let runs = hook_runs(&lines);
    assert_eq!(runs.len(), 4);
    assert!(
        runs.iter().all(|(_, decision)| decision == "failed"),
        "{runs:?}"
    );
    let warnings: Vec<String> = lines
        .iter()
        .filter(|l| l["item"]["type"] == "error")
        .map(|l| l["item"]["message"].as_str().unwrap().to_string())
        .collect();
    let all = warnings.join("\n");
    assert!(all.contains("invalid JSON"), "{all}");
    assert!(all.contains("unknown decision `perhaps`"), "{all}");
    assert!(all.contains("timed out after 1 s"), "{all}");
    assert!(all.contains("status 137"), "{all}");
}

#[test]
fn an_untrusted_project_config_adds_no_hooks() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "ran"]),
        MockResponse::text("ok"),
    ]);
    let project = h.workdir.path().join(".troupe");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("config.toml"),
        hook("PreToolUse", None, "exit 2", 10),
    )
    .unwrap();
    std::fs::write(
        project.join("hooks.json"),
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"exit 2"}]}]}}"#,
    )
    .unwrap();
    let out = h.exec(&["--json", "touch"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(h.workdir.path().join("ran").exists());
    assert!(hook_runs(&troupe_test_support::json_lines(&out)).is_empty());
}

#[test]
fn a_hook_config_error_names_the_file_and_line() {
    let h = Harness::new(vec![]);
    add_hooks(&h, "[[hooks.PreToolUze]]\nmatcher = \"Bash\"\n");
    let out = h.exec(&["hi"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("config.toml:") && err.contains("PreToolUze"),
        "{err}"
    );
}
