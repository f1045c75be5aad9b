use super::*;
use pretty_assertions::assert_eq;

/// A run of Codex's `exec --json` (two commands, a message), byte for byte.
const CODEX_SAMPLE: &str = include_str!("testdata/codex_exec_json_sample.jsonl");

fn command(
    id: &str,
    step: &str,
    output: &str,
    exit: Option<i32>,
    status: ItemStatus,
) -> ThreadItem {
    ThreadItem {
        id: id.into(),
        details: ItemDetails::CommandExecution {
            command: format!("/bin/bash -lc 'echo {step}'"),
            aggregated_output: output.into(),
            exit_code: exit,
            status,
        },
    }
}

#[test]
fn the_typed_events_serialize_to_codex_lines_exactly() {
    let events = [
        ThreadEvent::ThreadStarted {
            thread_id: "01a22b36-b555-7562-a4a7-67d02f9f58b9".into(),
        },
        ThreadEvent::TurnStarted,
        ThreadEvent::ItemStarted {
            item: command("item_0", "step-1", "", None, ItemStatus::InProgress),
        },
        ThreadEvent::ItemCompleted {
            item: command(
                "item_0",
                "step-1",
                "step-1\n",
                Some(0),
                ItemStatus::Completed,
            ),
        },
        ThreadEvent::ItemStarted {
            item: command("item_1", "step-2", "", None, ItemStatus::InProgress),
        },
        ThreadEvent::ItemCompleted {
            item: command(
                "item_1",
                "step-2",
                "step-2\n",
                Some(0),
                ItemStatus::Completed,
            ),
        },
        ThreadEvent::ItemCompleted {
            item: ThreadItem {
                id: "item_2".into(),
                details: ItemDetails::AgentMessage {
                    text: "done".into(),
                },
            },
        },
        ThreadEvent::TurnCompleted {
            usage: Usage {
                input_tokens: 28880,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: 11,
                reasoning_output_tokens: 0,
            },
        },
    ];
    let lines: Vec<String> = events
        .iter()
        .map(|event| serde_json::to_string(event).unwrap())
        .collect();
    let expected: Vec<&str> = CODEX_SAMPLE.lines().collect();
    assert_eq!(lines, expected);
}

#[test]
fn the_other_items_keep_their_shapes() {
    let line = |event: ThreadEvent| serde_json::to_string(&event).unwrap();
    assert_eq!(
        line(ThreadEvent::ItemCompleted {
            item: ThreadItem {
                id: "item_3".into(),
                details: ItemDetails::FileChange {
                    changes: vec![FileUpdate {
                        path: "a.txt".into(),
                        kind: FileUpdateKind::Add,
                    }],
                    status: ItemStatus::Failed,
                },
            },
        }),
        r#"{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"a.txt","kind":"add"}],"status":"failed"}}"#
    );
    assert_eq!(
        line(ThreadEvent::ItemUpdated {
            item: ThreadItem {
                id: "item_4".into(),
                details: ItemDetails::TodoList {
                    items: vec![TodoItem {
                        text: "plan".into(),
                        completed: true,
                    }],
                },
            },
        }),
        r#"{"type":"item.updated","item":{"id":"item_4","type":"todo_list","items":[{"text":"plan","completed":true}]}}"#
    );
    assert_eq!(
        line(ThreadEvent::TurnFailed {
            error: ThreadError {
                message: "boom".into(),
            },
        }),
        r#"{"type":"turn.failed","error":{"message":"boom"}}"#
    );
    assert_eq!(
        line(ThreadEvent::Error {
            message: "Reconnecting... 1/2 (idle)".into(),
        }),
        r#"{"type":"error","message":"Reconnecting... 1/2 (idle)"}"#
    );
}

/// Codex 0.169's `exec --json` lines for a call of server-everything's `echo` (recorded
/// against a mock model), byte for byte.
const CODEX_MCP_SAMPLE: &str = include_str!("testdata/codex_mcp_tool_call.jsonl");

#[test]
fn an_mcp_tool_call_serializes_to_codex_lines_exactly() {
    let item = |result: Option<McpToolCallResult>, status| ThreadItem {
        id: "item_1".into(),
        details: ItemDetails::McpToolCall {
            server: "everything".into(),
            tool: "echo".into(),
            arguments: serde_json::json!({"message": "hi"}),
            result,
            error: None,
            status,
        },
    };
    let events = [
        ThreadEvent::ItemStarted {
            item: item(None, ItemStatus::InProgress),
        },
        ThreadEvent::ItemCompleted {
            item: item(
                Some(McpToolCallResult {
                    content: vec![serde_json::json!({"type": "text", "text": "Echo: hi"})],
                    structured_content: None,
                }),
                ItemStatus::Completed,
            ),
        },
    ];
    let ours: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    let codex: Vec<&str> = CODEX_MCP_SAMPLE.lines().collect();
    assert_eq!(ours, codex);
}
