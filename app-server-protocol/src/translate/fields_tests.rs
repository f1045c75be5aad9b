//! Codex's item and error fields filled from what the runtime reports: a tool call's
//! answer and duration, an MCP call as Codex's `mcpToolCall` item, and the kind of a
//! turn's failure.

use crate::translate::{Out, Translator};
use serde_json::{json, Value};
use troupe_messages::errors::{ModelError, TurnError};
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ids::TurnId;

fn params(out: &Out) -> &Value {
    match out {
        Out::Notify { params, .. } | Out::Ask { params, .. } => params,
        Out::AgentTurnEnded { .. } => &Value::Null,
    }
}

fn started() -> Translator {
    let mut t = Translator::new("th".into());
    t.on_event(&EventMsg::TurnStarted { turn_id: TurnId(1) }, 1000);
    t
}

#[test]
fn a_tool_call_item_carries_its_answer_and_duration() {
    let mut t = started();
    let begin = t.on_event(
        &EventMsg::ToolCallBegin {
            call_id: "c1".into(),
            tool_name: "view_image".into(),
        },
        1000,
    );
    let item = &params(&begin[0])["item"];
    assert_eq!(item["type"], "dynamicToolCall");
    assert_eq!(item["contentItems"], Value::Null);
    assert_eq!(item["durationMs"], Value::Null);
    let end = t.on_event(
        &EventMsg::ToolCallEnd {
            call_id: "c1".into(),
            tool_name: "view_image".into(),
            success: true,
            output: "attached".into(),
        },
        1250,
    );
    let item = &params(&end[0])["item"];
    assert_eq!(item["status"], "completed");
    assert_eq!(item["durationMs"], 250);
    assert_eq!(
        item["contentItems"],
        json!([{"type": "inputText", "text": "attached"}])
    );
}

fn mcp_end(call_id: &str, result: Option<Value>, error: Option<&str>) -> EventMsg {
    EventMsg::McpToolCallEnd {
        call_id: call_id.into(),
        tool_name: "mcp__docs__search".into(),
        server: "docs".into(),
        tool: "search".into(),
        arguments: json!({"q": "x"}),
        success: error.is_none(),
        output: "what the model was told".into(),
        result,
        error: error.map(str::to_string),
    }
}

#[test]
fn an_mcp_call_is_codexs_mcp_tool_call_item() {
    let mut t = started();
    let begin = t.on_event(
        &EventMsg::McpToolCallBegin {
            call_id: "m1".into(),
            tool_name: "mcp__docs__search".into(),
            server: "docs".into(),
            tool: "search".into(),
            arguments: json!({"q": "x"}),
        },
        2000,
    );
    assert_eq!(
        params(&begin[0])["item"],
        json!({"type": "mcpToolCall", "id": "m1", "server": "docs", "tool": "search",
               "arguments": {"q": "x"}, "status": "inProgress", "result": null,
               "error": null, "durationMs": null})
    );
    let result = json!({"content": [{"type": "text", "text": "found"}],
                        "structuredContent": {"hits": 1}, "isError": false});
    let end = t.on_event(&mcp_end("m1", Some(result), None), 2100);
    let item = &params(&end[0])["item"];
    assert_eq!(item["status"], "completed");
    assert_eq!(item["durationMs"], 100);
    assert_eq!(
        item["result"],
        json!({"content": [{"type": "text", "text": "found"}],
               "structuredContent": {"hits": 1}, "_meta": null})
    );
    assert_eq!(item["error"], Value::Null);

    t.on_event(
        &EventMsg::McpToolCallBegin {
            call_id: "m2".into(),
            tool_name: "mcp__docs__search".into(),
            server: "docs".into(),
            tool: "search".into(),
            arguments: json!({"q": "x"}),
        },
        3000,
    );
    let end = t.on_event(&mcp_end("m2", None, Some("timed out")), 3500);
    let item = &params(&end[0])["item"];
    assert_eq!(item["status"], "failed");
    assert_eq!(item["result"], Value::Null);
    assert_eq!(item["error"], json!({"message": "timed out"}));
    assert_eq!(item["durationMs"], 500);
}

#[test]
fn a_failed_turn_names_codexs_kind_of_failure() {
    for (error, info) in [
        (
            ModelError::ContextWindowExceeded {
                message: "too long".into(),
            },
            json!("contextWindowExceeded"),
        ),
        (
            ModelError::QuotaExceeded {
                message: "no credits".into(),
            },
            json!("usageLimitExceeded"),
        ),
        (
            ModelError::BadRequest {
                status: 400,
                message: "bad".into(),
            },
            json!("badRequest"),
        ),
        (
            ModelError::RetriesExhausted {
                attempts: 5,
                last: "503".into(),
            },
            json!({"responseTooManyFailedAttempts": {"httpStatusCode": null}}),
        ),
    ] {
        let mut t = started();
        let out = t.on_event(
            &EventMsg::Error {
                error: TurnError::Model(error),
                fatal: true,
            },
            1100,
        );
        assert_eq!(params(&out[0])["error"]["codexErrorInfo"], info);
        let end = t.on_event(
            &EventMsg::TurnAborted {
                turn_id: TurnId(1),
                reason: AbortReason::Failed,
            },
            1200,
        );
        let completed = end.iter().map(params).find(|p| p.get("turn").is_some());
        let turn = &completed.expect("turn/completed")["turn"];
        assert_eq!(turn["status"], "failed");
        assert_eq!(turn["error"]["codexErrorInfo"], info);
    }
    // A retried request's error says nothing of its kind.
    let mut t = started();
    let out = t.on_event(
        &EventMsg::StreamRetry {
            reason: "HTTP 503".into(),
            attempt: 1,
            max_attempts: 5,
            delay_ms: 100,
        },
        1100,
    );
    assert_eq!(params(&out[0])["willRetry"], true);
    assert_eq!(params(&out[0])["error"]["codexErrorInfo"], Value::Null);
}
