use super::*;
use crate::response::MockResponse;

fn items(response: &MockResponse) -> Vec<Value> {
    let MockResponse::Sse { events, .. } = response else {
        panic!("not an SSE answer: {response:?}");
    };
    events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| e["item"].clone())
        .collect()
}

fn config() -> AutoConfig {
    AutoConfig {
        command: "sleep 1".into(),
        ..AutoConfig::default()
    }
}

fn codex_tools() -> Value {
    json!([
        {"type": "function", "name": "exec_command"},
        {"type": "namespace", "name": "collaboration", "tools": [{"name": "spawn_agent"}]}
    ])
}

#[test]
fn the_root_spawns_every_child_then_waits_until_all_answered() {
    let troupe = json!({"tools": [{"type": "function", "name": "shell"}, {"type": "function", "name": "spawn_agent"}],
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]});
    let spawns = items(&respond(&config(), 3, &troupe));
    assert_eq!(spawns.len(), 3);
    assert_eq!(spawns[2]["name"], "spawn_agent");
    assert!(spawns[0].get("namespace").is_none());
    let args: Value = serde_json::from_str(spawns[2]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["task_name"], "a3");

    let mut input = troupe["input"].as_array().unwrap().clone();
    input.push(json!({"type": "function_call_output", "call_id": "spawn_1", "output": "ok"}));
    input.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text",
        "text": "<subagent_notification>\nfinal answer:\nagent-done a1.\n</subagent_notification>"}]}));
    let body = json!({"tools": troupe["tools"], "input": input});
    assert_eq!(
        items(&respond(&config(), 3, &body))[0]["name"],
        "wait_agent"
    );
    input.push(json!({"type": "function_call_output", "call_id": "wait_1",
        "output": "Wait completed.\n\n/root/a2 completed:\nagent-done a2.\n\n/root/a3 completed:\nagent-done a3."}));
    let body = json!({"tools": troupe["tools"], "input": input});
    let last = items(&respond(&config(), 3, &body));
    assert_eq!(last[0]["type"], "message", "{last:?}");
}

#[test]
fn codex_calls_name_the_collaboration_namespace_and_codex_answers_count() {
    let root = json!({"tools": codex_tools(), "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]});
    let spawns = items(&respond(&config(), 2, &root));
    assert!(spawns.iter().all(|s| s["namespace"] == "collaboration"));
    let done = json!({"tools": codex_tools(), "input": [
        {"type": "function_call_output", "call_id": "spawn_1", "output": "{}"},
        {"type": "agent_message", "author": "/root/a1", "recipient": "/root",
         "content": [{"type": "input_text", "text": "Message Type: FINAL_ANSWER\nPayload:\nagent-done a1."}]},
        {"type": "agent_message", "author": "/root/a10", "recipient": "/root",
         "content": [{"type": "input_text", "text": "Payload:\nagent-done a10."}]}]});
    // `a10.` does not count as `a1.`'s sibling `a2`.
    assert_eq!(answers_seen(&done, 2), 1);
    assert_eq!(
        items(&respond(&config(), 2, &done))[0]["name"],
        "wait_agent"
    );
}

#[test]
fn a_child_runs_the_command_once_then_answers_with_its_name() {
    let codex_child = json!({"tools": [{"type": "function", "name": "exec_command"}], "input": [
        {"type": "agent_message", "author": "/root", "recipient": "/root/a7",
         "content": [{"type": "input_text", "text": "Message Type: NEW_TASK"}]}]});
    assert_eq!(child_task_path(&codex_child).as_deref(), Some("/root/a7"));
    let call = items(&respond(&config(), 8, &codex_child));
    assert_eq!(call[0]["name"], "exec_command");
    assert!(call[0]["arguments"].as_str().unwrap().contains("sleep 1"));

    let troupe_child = json!({"tools": [{"type": "function", "name": "shell"}], "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text",
         "text": "[You are agent `/root/a2`, spawned by `/root`; …]\n\nRun it"}]},
        {"type": "function_call_output", "call_id": "cmd_a2", "output": "ok"}]});
    assert_eq!(child_task_path(&troupe_child).as_deref(), Some("/root/a2"));
    let answer = items(&respond(&config(), 8, &troupe_child));
    assert_eq!(answer[0]["content"][0]["text"], "agent-done a2.");
}
