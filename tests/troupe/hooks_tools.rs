//! Tool hooks through the real binary (spec 004's end-to-end cases): PreToolUse blocking
//! `apply_patch` and a shell command, PostToolUse seeing the patch and adding context or
//! withholding an output, PermissionRequest allowing and denying a shell escalation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::hooks_support::*;
use serde_json::json;
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

const ADD_NEW: &str = "*** Begin Patch\n*** Add File: new.txt\n+fresh\n*** End Patch";

#[test]
fn pre_tool_use_blocks_apply_patch_before_the_file_is_created() {
    let h = Harness::new(vec![
        custom_call("p1", "apply_patch", ADD_NEW),
        MockResponse::text("ok"),
    ]);
    let block = script(&h, "block.sh", "echo 'patches are frozen' >&2\nexit 2\n");
    let bash_only = script(&h, "bash.sh", "exit 2\n");
    add_hooks(
        &h,
        &(hook("PreToolUse", Some("^apply_patch$"), &block, 10)
            + &hook("PreToolUse", Some("Bash"), &bash_only, 10)),
    );
    let (lines, _) = exec_json(&h, &["add a file"]);
    assert!(
        !h.workdir.path().join("new.txt").exists(),
        "the patch must not run"
    );
    let requests = h.mock.requests();
    let out = outputs(&requests[1].body);
    assert_eq!(out.len(), 1);
    assert!(
        out[0].contains("blocked by a PreToolUse hook: patches are frozen"),
        "{out:?}"
    );
    // Only the apply_patch hook matched; its run is an item with its decision.
    assert_eq!(
        hook_runs(&lines),
        vec![("PreToolUse".into(), "block".into())]
    );
}

#[test]
fn pre_tool_use_blocks_a_shell_command_with_a_json_decision() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "made"]),
        MockResponse::text("ok"),
    ]);
    let (payloads, save) = capture(&h, "pre.jsonl");
    let deny = script(
        &h,
        "deny.sh",
        &format!("{save}echo '{{\"hookSpecificOutput\":{{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no touching\"}}}}'\n"),
    );
    add_hooks(&h, &hook("PreToolUse", Some("Bash|apply_patch"), &deny, 10));
    let (_, err) = exec_json(&h, &["touch it"]);
    assert!(!h.workdir.path().join("made").exists(), "{err}");
    let out = outputs(&h.mock.requests()[1].body);
    assert!(out[0].contains("no touching"), "{out:?}");
    let seen = captured(&payloads);
    assert_eq!(seen.len(), 1);
    let p = &seen[0];
    assert_eq!(p["hook_event_name"], "PreToolUse");
    assert_eq!(p["tool_name"], "Bash");
    assert_eq!(p["tool_input"]["command"], "touch made");
    assert_eq!(p["tool_use_id"], "c1");
    assert_eq!(p["model"], "mock-model");
    assert_eq!(p["turn_id"], "1");
    assert!(p["session_id"].as_str().unwrap().len() > 10);
    assert!(p["transcript_path"].as_str().unwrap().ends_with(".jsonl"));
    assert_eq!(
        std::fs::canonicalize(p["cwd"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(h.workdir.path()).unwrap()
    );
}

#[test]
fn post_tool_use_sees_the_patch_and_adds_context_for_the_model() {
    let h = Harness::new(vec![
        custom_call("p1", "apply_patch", ADD_NEW),
        MockResponse::text("ok"),
    ]);
    let (payloads, save) = capture(&h, "post.jsonl");
    let post = script(
        &h,
        "post.sh",
        &format!(
            "{save}echo '{{\"hookSpecificOutput\":{{\"additionalContext\":\"lint passed\"}}}}'\n"
        ),
    );
    add_hooks(&h, &hook("PostToolUse", Some("apply_patch"), &post, 10));
    let (lines, _) = exec_json(&h, &["add a file"]);
    assert!(h.workdir.path().join("new.txt").exists());
    let seen = captured(&payloads);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["tool_name"], "apply_patch");
    assert_eq!(seen[0]["tool_input"]["command"], ADD_NEW);
    assert!(
        seen[0]["tool_response"].to_string().contains("new.txt"),
        "{}",
        seen[0]
    );
    let out = outputs(&h.mock.requests()[1].body);
    assert!(out[0].contains("lint passed"), "{out:?}");
    assert_eq!(
        hook_runs(&lines),
        vec![("PostToolUse".into(), "none".into())]
    );
}

#[test]
fn post_tool_use_block_replaces_the_output_the_model_reads() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["echo", "secret-output"]),
        MockResponse::text("ok"),
    ]);
    let withhold = script(
        &h,
        "withhold.sh",
        "echo '{\"decision\":\"block\",\"reason\":\"output withheld: contains a token\"}'\n",
    );
    add_hooks(&h, &hook("PostToolUse", Some("Bash"), &withhold, 10));
    exec_json(&h, &["echo"]);
    let out = outputs(&h.mock.requests()[1].body);
    assert!(!out[0].contains("secret-output"), "{out:?}");
    assert!(
        out[0].contains("output withheld: contains a token"),
        "{out:?}"
    );
}

/// `exec` under workspace-write + on-request, where exec itself denies every question.
fn escalate(h: &Harness) -> std::process::Output {
    h.command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "-a",
            "on-request",
            "--json",
            "escalate",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn escalation_script() -> Vec<MockResponse> {
    let args =
        json!({"command": ["touch", "escalated"], "sandbox_permissions": "require_escalated",
                      "justification": "need to write the shared cache"})
        .to_string();
    vec![
        MockResponse::tool_calls(vec![("c1", "shell", args.as_str())]),
        MockResponse::text("ok"),
    ]
}

#[test]
fn permission_request_hook_allows_a_shell_escalation() {
    let h = Harness::new(escalation_script());
    let (payloads, save) = capture(&h, "perm.jsonl");
    let allow = script(
        &h,
        "allow.sh",
        &format!("{save}echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{{\"behavior\":\"allow\"}}}}}}'\n"),
    );
    add_hooks(&h, &hook("PermissionRequest", Some("Bash"), &allow, 10));
    let out = escalate(&h);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        h.workdir.path().join("escalated").exists(),
        "{}",
        stderr(&out)
    );
    let seen = captured(&payloads);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["hook_event_name"], "PermissionRequest");
    assert_eq!(seen[0]["tool_name"], "Bash");
    assert_eq!(seen[0]["tool_input"]["command"], "touch escalated");
    assert_eq!(
        seen[0]["tool_input"]["description"],
        "need to write the shared cache"
    );
}

#[test]
fn permission_request_hook_denies_and_silence_falls_back_to_asking() {
    let h = Harness::new(escalation_script());
    let deny = script(
        &h,
        "deny.sh",
        "echo '{\"hookSpecificOutput\":{\"decision\":{\"behavior\":\"deny\",\"message\":\"no escalations on fridays\"}}}'\n",
    );
    add_hooks(&h, &hook("PermissionRequest", None, &deny, 10));
    let out = escalate(&h);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!h.workdir.path().join("escalated").exists());
    let o = outputs(&h.mock.requests()[1].body);
    assert!(o[0].contains("no escalations on fridays"), "{o:?}");

    // A hook that says nothing: the normal approval path (exec denies it).
    let h = Harness::new(escalation_script());
    let quiet = script(&h, "quiet.sh", "exit 0\n");
    add_hooks(&h, &hook("PermissionRequest", None, &quiet, 10));
    let out = escalate(&h);
    assert!(!h.workdir.path().join("escalated").exists());
    let o = outputs(&h.mock.requests()[1].body);
    assert!(o[0].contains("rejected by user"), "{o:?} {}", stderr(&out));
}

#[test]
fn pre_tool_use_may_rewrite_a_command_with_allow_and_updated_input() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["touch", "dangerous"]),
        MockResponse::text("ok"),
    ]);
    let rewrite = script(
        &h,
        "rewrite.sh",
        "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\",\"updatedInput\":{\"command\":\"touch safe\"}}}'\n",
    );
    add_hooks(&h, &hook("PreToolUse", Some("Bash"), &rewrite, 10));
    exec_json(&h, &["touch"]);
    assert!(h.workdir.path().join("safe").exists());
    assert!(!h.workdir.path().join("dangerous").exists());
}
