use super::*;
use pretty_assertions::assert_eq;

/// The schema Codex's `codex` tool advertises (its own test, `verify_codex_tool_json_schema`),
/// with the tool's names and the word Codex replaced.
#[test]
fn the_start_tool_has_codex_s_schema() {
    let tool = serde_json::to_value(start_tool()).unwrap();
    let properties = tool["inputSchema"]["properties"].as_object().unwrap();
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "approval-policy",
            "base-instructions",
            "compact-prompt",
            "config",
            "cwd",
            "developer-instructions",
            "model",
            "profile",
            "prompt",
            "sandbox"
        ]
    );
    assert_eq!(tool["name"], "troupe");
    assert_eq!(tool["title"], "Troupe");
    assert_eq!(tool["inputSchema"]["required"], json!(["prompt"]));
    assert_eq!(
        properties["approval-policy"]["enum"],
        json!(["untrusted", "on-failure", "on-request", "never"])
    );
    assert_eq!(
        properties["sandbox"]["enum"],
        json!(["read-only", "workspace-write", "danger-full-access"])
    );
    assert_eq!(
        tool["outputSchema"],
        json!({
            "type": "object",
            "properties": {"threadId": {"type": "string"}, "content": {"type": "string"}},
            "required": ["threadId", "content"]
        })
    );
}

#[test]
fn the_reply_tool_has_codex_s_schema() {
    let tool = serde_json::to_value(reply_tool()).unwrap();
    assert_eq!(tool["name"], "troupe-reply");
    let properties = tool["inputSchema"]["properties"].as_object().unwrap();
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["conversationId", "prompt", "threadId"]);
    assert_eq!(tool["inputSchema"]["required"], json!(["prompt"]));
}

fn args(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

#[test]
fn start_arguments_parse_in_kebab_case_and_unknown_ones_are_refused() {
    let call: StartParams = parse(
        START_TOOL,
        args(json!({"prompt": "hi", "approval-policy": "on-request", "sandbox": "read-only"})),
    )
    .unwrap();
    assert_eq!(call.approval_policy, Some(ApprovalParam::OnRequest));
    assert_eq!(call.sandbox, Some(SandboxParam::ReadOnly));
    let err =
        parse::<StartParams>(START_TOOL, args(json!({"prompt": "hi", "colour": 1}))).unwrap_err();
    assert!(err.contains("invalid arguments for `troupe`"), "{err}");
    assert!(err.contains("colour"), "{err}");
    let err = parse::<StartParams>(START_TOOL, None).unwrap_err();
    assert!(err.contains("prompt"), "{err}");
}

#[test]
fn reply_takes_thread_id_or_the_deprecated_conversation_id() {
    let call: ReplyParams = parse(
        REPLY_TOOL,
        args(json!({"conversationId": "abc", "prompt": "p"})),
    )
    .unwrap();
    assert_eq!(call.thread().unwrap(), "abc");
    let call: ReplyParams = parse(REPLY_TOOL, args(json!({"prompt": "p"}))).unwrap();
    assert!(call.thread().is_err());
}

#[test]
fn config_values_become_toml_overrides() {
    let call: StartParams = parse(
        START_TOOL,
        args(json!({
            "prompt": "p",
            "config": {"model_reasoning_effort": "high", "a.b": [1, true, {"x": 1.5}]},
            "base-instructions": "be \"brief\"\n",
            "developer-instructions": "dev"
        })),
    )
    .unwrap();
    let raw = call.config_overrides().unwrap();
    assert_eq!(
        raw,
        [
            "model_reasoning_effort=\"high\"",
            "a.b=[1, true, { \"x\" = 1.5 }]",
            "instructions=\"be \\\"brief\\\"\\n\"",
            "developer_instructions=\"dev\"",
        ]
    );
    let null: StartParams = parse(
        START_TOOL,
        args(json!({"prompt": "p", "config": {"k": null}})),
    )
    .unwrap();
    assert!(null.config_overrides().unwrap_err().contains("config.k"));
    let compact: StartParams = parse(
        START_TOOL,
        args(json!({"prompt": "p", "compact-prompt": "x"})),
    )
    .unwrap();
    assert!(compact
        .config_overrides()
        .unwrap_err()
        .contains("compact-prompt"));
}
