//! Hook answers (exit codes, JSON), the hook-facing view of calls, and real runs of `sh`.

use super::output::{interpret, HookExit};
use super::tool_input::{hook_tool, rewrite_call, script_of};
use super::TurnHooks;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use troupe_messages::events::EventMsg;
use troupe_messages::hooks::{HookDecision, HookEventName as E, HookHandler};
use troupe_messages::tools::{ToolCall, ToolPayload};

fn ok(event: E, stdout: &str) -> (HookDecision, Option<String>) {
    let v = interpret(event, &HookExit::Exited(0), stdout, "");
    (v.decision, v.reason)
}

#[test]
fn exit_two_blocks_with_stderr_and_other_exits_fail() {
    let v = interpret(E::PreToolUse, &HookExit::Exited(2), "", "no rm please\n");
    assert_eq!(
        (v.decision, v.reason.as_deref()),
        (HookDecision::Block, Some("no rm please"))
    );
    let v = interpret(E::PermissionRequest, &HookExit::Exited(2), "", "nope");
    assert_eq!(v.decision, HookDecision::Deny);
    let v = interpret(E::Stop, &HookExit::Exited(1), "", "boom");
    assert_eq!(v.decision, HookDecision::Failed);
    assert!(v.reason.unwrap().contains("status 1: boom"));
    let v = interpret(E::Stop, &HookExit::TimedOut(3), "", "");
    assert_eq!(v.decision, HookDecision::Failed);
}

#[test]
fn json_decisions_per_event() {
    assert_eq!(
        ok(E::PreToolUse, r#"{"decision":"block","reason":"r"}"#),
        (HookDecision::Block, Some("r".into()))
    );
    assert_eq!(
        ok(
            E::PreToolUse,
            r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"why"}}"#
        ),
        (HookDecision::Block, Some("why".into()))
    );
    assert_eq!(
        ok(E::PreToolUse, r#"{"decision":"approve"}"#).0,
        HookDecision::None
    );
    assert_eq!(
        ok(E::PostToolUse, r#"{"decision":"block","reason":"fb"}"#).0,
        HookDecision::Block
    );
    assert_eq!(
        ok(E::Stop, r#"{"decision":"block","reason":"run tests"}"#).0,
        HookDecision::Block
    );
    assert_eq!(
        ok(E::Stop, r#"{"continue":false,"stopReason":"done"}"#).0,
        HookDecision::None
    );
    assert_eq!(
        ok(
            E::UserPromptSubmit,
            r#"{"continue":false,"stopReason":"no"}"#
        ),
        (HookDecision::Block, Some("no".into()))
    );
    assert_eq!(
        ok(
            E::PermissionRequest,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"}}}"#
        )
        .0,
        HookDecision::Allow
    );
    assert_eq!(
        ok(
            E::PermissionRequest,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"m"}}}"#
        ),
        (HookDecision::Deny, Some("m".into()))
    );
    assert_eq!(ok(E::PermissionRequest, "{}").0, HookDecision::None);
}

#[test]
fn garbage_unknown_decisions_and_reasonless_blocks_fail() {
    for (event, stdout) in [
        (E::PreToolUse, "{not json"),
        (E::PreToolUse, r#"{"decision":"maybe"}"#),
        (E::Stop, r#"{"decision":"block"}"#),
        (
            E::PreToolUse,
            r#"{"hookSpecificOutput":{"permissionDecision":"perhaps"}}"#,
        ),
        (
            E::PermissionRequest,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"sure"}}}"#,
        ),
        (E::PostToolUse, r#"[1,2]"#),
        (E::Stop, r#"{"reason": 5, "decision":"block"}"#),
    ] {
        assert_eq!(ok(event, stdout).0, HookDecision::Failed, "{stdout}");
    }
}

#[test]
fn pre_tool_use_may_rewrite_with_allow_and_other_rewrites_are_refused() {
    let out =
        r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls"}}}"#;
    let v = interpret(E::PreToolUse, &HookExit::Exited(0), out, "");
    assert_eq!(v.decision, HookDecision::None);
    assert_eq!(v.updated_input, Some(json!({"command": "ls"})));
    let without_allow = r#"{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}"#;
    assert_eq!(ok(E::PreToolUse, without_allow).0, HookDecision::Failed);
    let perms =
        r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"},"updatedPermissions":{}}}"#;
    assert_eq!(ok(E::PermissionRequest, perms).0, HookDecision::Block);
    let shell = call(
        "shell",
        ToolPayload::Function {
            arguments: json!({"command":["rm","-rf","x"],"workdir":"sub"}).to_string(),
        },
    );
    let rewritten = rewrite_call(&shell, &json!({"command": "echo safe"})).unwrap();
    let ToolPayload::Function { arguments } = &rewritten.payload else {
        panic!("function")
    };
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap();
    assert_eq!(
        args,
        json!({"command":["bash","-lc","echo safe"],"workdir":"sub"})
    );
    let patch = call(
        "apply_patch",
        ToolPayload::Custom {
            input: "old".into(),
        },
    );
    assert_eq!(
        rewrite_call(&patch, &json!({"command": "new"}))
            .unwrap()
            .payload,
        ToolPayload::Custom {
            input: "new".into()
        }
    );
    assert!(rewrite_call(&shell, &json!({"cmd": 1})).is_err());
}

#[test]
fn context_from_json_or_plain_text_where_allowed() {
    let v = interpret(E::SessionStart, &HookExit::Exited(0), "remember X\n", "");
    assert_eq!(v.additional_context.as_deref(), Some("remember X"));
    let v = interpret(E::PreToolUse, &HookExit::Exited(0), "just a log line", "");
    assert_eq!(
        (v.decision, v.additional_context),
        (HookDecision::None, None)
    );
    let v = interpret(
        E::PostToolUse,
        &HookExit::Exited(0),
        r#"{"hookSpecificOutput":{"additionalContext":"saw it"},"systemMessage":"hi"}"#,
        "",
    );
    assert_eq!(v.additional_context.as_deref(), Some("saw it"));
    assert_eq!(v.system_message.as_deref(), Some("hi"));
}

fn call(tool: &str, payload: ToolPayload) -> ToolCall {
    ToolCall {
        call_id: "c1".into(),
        tool_name: tool.into(),
        payload,
    }
}

#[test]
fn tool_names_and_inputs_as_hooks_see_them() {
    let shell = call(
        "shell",
        ToolPayload::Function {
            arguments: json!({"command":["bash","-lc","rm -f /tmp/x"],"justification":"clean"})
                .to_string(),
        },
    );
    assert_eq!(
        hook_tool(&shell),
        Some((
            "Bash".into(),
            json!({"command":"rm -f /tmp/x","description":"clean"})
        ))
    );
    let exec = call(
        "exec_command",
        ToolPayload::Function {
            arguments: json!({"cmd":"ls"}).to_string(),
        },
    );
    assert_eq!(
        hook_tool(&exec),
        Some(("Bash".into(), json!({"command":"ls"})))
    );
    let patch = call(
        "apply_patch",
        ToolPayload::Custom {
            input: "*** Begin Patch".into(),
        },
    );
    assert_eq!(
        hook_tool(&patch),
        Some(("apply_patch".into(), json!({"command":"*** Begin Patch"})))
    );
    let mcp = call(
        "mcp__memory__create",
        ToolPayload::Function {
            arguments: r#"{"a":1}"#.into(),
        },
    );
    assert_eq!(
        hook_tool(&mcp),
        Some(("mcp__memory__create".into(), json!({"a":1})))
    );
    let plan = call(
        "update_plan",
        ToolPayload::Function {
            arguments: "{}".into(),
        },
    );
    assert_eq!(hook_tool(&plan), None);
    assert_eq!(script_of(&["ls".into(), "a b".into()]), "ls 'a b'");
}

fn hooks_with(
    handlers: Vec<(E, Option<&str>, &str, u64)>,
) -> (TurnHooks, Arc<Mutex<Vec<EventMsg>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let mut hooks = TurnHooks::none();
    hooks.events = Arc::new(move |msg| sink.lock().unwrap().push(msg));
    hooks.cwd = std::env::temp_dir();
    hooks.handlers = handlers
        .into_iter()
        .map(|(event, matcher, command, timeout_sec)| HookHandler {
            event,
            matcher: matcher.map(str::to_string),
            command: command.into(),
            timeout_sec,
            source: PathBuf::from("/test/config.toml"),
        })
        .collect();
    (hooks, seen)
}

#[tokio::test]
async fn runs_match_in_parallel_and_bad_hooks_are_warnings() {
    let (hooks, seen) = hooks_with(vec![
        (
            E::PreToolUse,
            Some("Bash"),
            "sleep 1; echo '{\"decision\":\"block\",\"reason\":\"one\"}'",
            10,
        ),
        (
            E::PreToolUse,
            Some("Bash|Other"),
            "sleep 1; echo no >&2; exit 2",
            10,
        ),
        (E::PreToolUse, Some("apply_patch"), "exit 2", 10),
        (E::PreToolUse, None, "sleep 30", 1),
        (E::PreToolUse, None, "echo '{garbage'", 10),
    ]);
    let shell = call(
        "shell",
        ToolPayload::Function {
            arguments: json!({"command":["ls"]}).to_string(),
        },
    );
    let started = std::time::Instant::now();
    let reason = hooks.pre_tool_use(&shell).await.err();
    // Two one-second hooks and a one-second timeout together, not one after the other.
    assert!(
        started.elapsed() < std::time::Duration::from_millis(2800),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(reason.as_deref(), Some("one\nno"));
    let seen = seen.lock().unwrap();
    let completed: Vec<HookDecision> = seen
        .iter()
        .filter_map(|e| match e {
            EventMsg::HookCompleted { decision, .. } => Some(*decision),
            _ => None,
        })
        .collect();
    assert_eq!(
        completed.len(),
        4,
        "the apply_patch hook does not match Bash"
    );
    assert_eq!(
        completed
            .iter()
            .filter(|d| **d == HookDecision::Failed)
            .count(),
        2
    );
    let warnings = seen
        .iter()
        .filter(|e| matches!(e, EventMsg::Warning { .. }))
        .count();
    assert_eq!(warnings, 2);
}

#[tokio::test]
async fn the_payload_reaches_stdin() {
    let (mut hooks, _) = hooks_with(vec![(
        E::UserPromptSubmit,
        None,
        r#"tr -d '\n' | sed -e 's/.*"hook_event_name":"\([A-Za-z]*\)".*"prompt":"\([a-z]*\)".*/\1:\2/'"#,
        10,
    )]);
    hooks.common.insert("session_id".into(), json!("s"));
    let effect = hooks.user_prompt_submit("hello").await;
    assert_eq!(effect.context, vec!["UserPromptSubmit:hello".to_string()]);
    assert_eq!(effect.blocked, None);
}
