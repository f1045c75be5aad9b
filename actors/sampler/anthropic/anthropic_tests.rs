#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::sampler::sse::StreamEvent;
use pretty_assertions::assert_eq;
use troupe_messages::items::ContentItem;

fn event(value: Value) -> String {
    value.to_string()
}

#[test]
fn history_alternates_roles_replays_signed_thinking_and_caches_the_prefix() {
    let input = vec![
        ResponseItem::user_text("fix it"),
        ResponseItem::developer_text("note"),
        ResponseItem::Reasoning {
            id: format!("{ANTHROPIC_REASONING_ID_PREFIX}1"),
            summary: vec![ReasoningSummary::SummaryText { text: "hmm".into() }],
            encrypted_content: Some(format!("{ANTHROPIC_SIGNATURE_PREFIX}sig")),
        },
        // Reasoning from another provider is not sent.
        ResponseItem::Reasoning {
            id: "rs_openai".into(),
            summary: vec![],
            encrypted_content: Some("opaque".into()),
        },
        ResponseItem::Message {
            id: None,
            role: Role::Assistant,
            content: vec![ContentItem::OutputText { text: "ok".into() }],
        },
        ResponseItem::CustomToolCall {
            id: None,
            call_id: "p".into(),
            name: "apply_patch".into(),
            input: "PATCH".into(),
        },
        ResponseItem::CustomToolCallOutput {
            call_id: "p".into(),
            output: "done".into(),
        },
    ];
    assert_eq!(
        messages(&input),
        vec![
            json!({"role": "user", "content": [
                {"type": "text", "text": "fix it"}, {"type": "text", "text": "note"}]}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "p", "name": "apply_patch", "input": {"input": "PATCH"}}]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "p", "content": "done",
                 "cache_control": {"type": "ephemeral"}}]}),
        ]
    );
}

#[test]
fn body_has_max_tokens_system_cache_and_thinking_budget() {
    let request = ModelRequest {
        model: "claude".into(),
        instructions: "sys".into(),
        input: vec![ResponseItem::user_text("hi")],
        tools: vec![ToolSpec::Function {
            name: "shell".into(),
            description: "d".into(),
            strict: false,
            parameters: json!({"type": "object"}),
        }],
        parallel_tool_calls: false,
        prompt_cache_key: "k".into(),
        reasoning_effort: Some("medium".into()),
        verbosity: None,
        output_schema: None,
    };
    let body = request_body(&request);
    assert_eq!(body["max_tokens"], MAX_OUTPUT_TOKENS);
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(body["tools"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["tool_choice"]["disable_parallel_tool_use"], true);
    assert_eq!(body["thinking"]["budget_tokens"], 10_000);
}

#[test]
fn a_stream_of_blocks_becomes_items_and_usage() {
    let mut decoder = AnthropicDecoder::new(&[]);
    let mut events = Vec::new();
    for data in [
        event(
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5, "output_tokens": 1}}}),
        ),
        event(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "plan"}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}}),
        ),
        event(
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "shell", "input": {}}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\""}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ": [\"ls\"]}"}}),
        ),
        event(json!({"type": "ping"})),
        event(
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        ),
        event(json!({"type": "message_stop"})),
    ] {
        events.extend(decoder.data(&data).unwrap());
    }
    assert!(events.contains(&StreamEvent::ReasoningDelta("plan".into())));
    let items: Vec<&ResponseItem> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ItemDone(item) => Some(item),
            _ => None,
        })
        .collect();
    assert!(
        matches!(items[0], ResponseItem::Reasoning { encrypted_content: Some(c), .. } if c == "anthropic-signature:SIG")
    );
    assert_eq!(
        items[1],
        &ResponseItem::FunctionCall {
            id: None,
            call_id: "t1".into(),
            name: "shell".into(),
            arguments: "{\"command\": [\"ls\"]}".into()
        }
    );
    let Some(StreamEvent::Completed(usage)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens,
            usage.cache_write_input_tokens
        ),
        (105, 90, 30, 5)
    );
}

#[test]
fn errors_max_tokens_and_stray_deltas_fail() {
    let failure = |events: Vec<StreamEvent>| match events.last() {
        Some(StreamEvent::Failed { error, retryable }) => (error.to_string(), *retryable),
        other => panic!("{other:?}"),
    };
    let mut decoder = AnthropicDecoder::new(&[]);
    let (message, retryable) = failure(
        decoder
            .data(&event(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})))
            .unwrap(),
    );
    assert!(
        message.contains("overloaded_error") && retryable,
        "{message}"
    );

    let mut decoder = AnthropicDecoder::new(&[]);
    let (message, retryable) = failure(
        decoder
            .data(&event(json!({"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}})))
            .unwrap(),
    );
    assert!(message.contains("never started") && retryable, "{message}");

    let mut decoder = AnthropicDecoder::new(&[]);
    decoder
        .data(&event(
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
        ))
        .unwrap();
    let (message, retryable) = failure(
        decoder
            .data(&event(json!({"type": "message_stop"})))
            .unwrap(),
    );
    assert!(message.contains("max_tokens") && !retryable, "{message}");
}
