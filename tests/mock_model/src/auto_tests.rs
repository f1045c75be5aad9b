use super::*;
use pretty_assertions::assert_eq;

fn body(tools: &[&str], outputs: usize) -> Value {
    let mut input = vec![json!({"type": "message", "role": "user", "content": "go"})];
    for i in 0..outputs {
        input.push(json!({"type": "function_call", "call_id": format!("c{i}")}));
        input.push(
            json!({"type": "function_call_output", "call_id": format!("c{i}"), "output": "ok"}),
        );
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|n| json!({"type": "function", "name": n, "parameters": {}}))
        .collect();
    json!({"model": "m", "input": input, "tools": tools, "stream": true})
}

fn calls(resp: &MockResponse) -> Vec<Value> {
    match resp {
        MockResponse::Sse { events, .. } => events
            .iter()
            .filter(|e| e["item"]["type"] == "function_call")
            .map(|e| e["item"].clone())
            .collect(),
        other => panic!("expected SSE, got {other:?}"),
    }
}

fn final_text(resp: &MockResponse) -> Option<String> {
    match resp {
        MockResponse::Sse { events, .. } => events
            .iter()
            .find(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "message")
            .and_then(|e| e["item"]["content"][0]["text"].as_str().map(str::to_owned)),
        _ => None,
    }
}

#[test]
fn counts_function_and_custom_outputs() {
    let mut b = body(&[], 2);
    if let Some(input) = b["input"].as_array_mut() {
        input.push(json!({"type": "custom_tool_call_output", "call_id": "x", "output": ""}));
    }
    assert_eq!(count_tool_outputs(&b), 3);
    assert_eq!(count_tool_outputs(&json!({})), 0);
}

#[test]
fn picks_tool_by_advertised_name() {
    assert_eq!(
        pick_flavor(&body(&["shell", "exec_command"], 0)),
        ToolFlavor::Shell
    );
    assert_eq!(
        pick_flavor(&body(&["write_stdin", "exec_command"], 0)),
        ToolFlavor::ExecCommand
    );
    assert_eq!(
        pick_flavor(&body(&["shell_command"], 0)),
        ToolFlavor::ShellCommand
    );
    assert_eq!(pick_flavor(&body(&[], 0)), ToolFlavor::Shell);
    let chat = json!({"tools": [{"type": "function", "function": {"name": "exec_command"}}]});
    assert_eq!(pick_flavor(&chat), ToolFlavor::ExecCommand);
}

#[test]
fn tool_calls_then_answer() {
    let cfg = AutoConfig {
        tool_calls: 2,
        command: "echo hi".into(),
        ..AutoConfig::default()
    };
    let first = respond(&cfg, &body(&["exec_command"], 0));
    let c = calls(&first);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0]["name"], "exec_command");
    assert_eq!(c[0]["call_id"], "call_0_0");
    assert_eq!(c[0]["arguments"], json!({"cmd": "echo hi"}).to_string());

    let second = calls(&respond(&cfg, &body(&["shell"], 1)));
    assert_eq!(second[0]["call_id"], "call_1_0");
    assert_eq!(
        second[0]["arguments"],
        json!({"command": ["sh", "-c", "echo hi"]}).to_string()
    );

    let last = respond(&cfg, &body(&["shell"], 2));
    assert!(calls(&last).is_empty());
    assert_eq!(final_text(&last).as_deref(), Some("done"));
}

#[test]
fn parallel_batches_are_capped_by_remaining() {
    let cfg = AutoConfig {
        tool_calls: 3,
        parallel: 2,
        ..AutoConfig::default()
    };
    let ids = |n| -> Vec<Value> {
        calls(&respond(&cfg, &body(&["shell_command"], n)))
            .iter()
            .map(|c| c["call_id"].clone())
            .collect()
    };
    assert_eq!(ids(0), vec![json!("call_0_0"), json!("call_0_1")]);
    assert_eq!(ids(2), vec![json!("call_2_0")]);
}

#[test]
fn generated_answer_has_size_and_deltas() {
    let cfg = AutoConfig {
        tool_calls: 0,
        answer_bytes: 1000,
        answer_deltas: 10,
        ..AutoConfig::default()
    };
    let resp = respond(&cfg, &body(&[], 0));
    assert_eq!(final_text(&resp).map(|t| t.len()), Some(1000));
    let MockResponse::Sse { events, .. } = resp else {
        panic!("SSE expected")
    };
    let deltas = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .count();
    assert_eq!(deltas, 10);
}
