#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::sampler::sse::StreamEvent;
use pretty_assertions::assert_eq;
use troupe_messages::items::ContentItem;

fn custom_tool() -> ToolSpec {
    ToolSpec::Custom {
        name: "apply_patch".into(),
        description: "patch".into(),
        format: json!({"type": "grammar"}),
    }
}

fn shell_tool() -> ToolSpec {
    ToolSpec::Function {
        name: "shell".into(),
        description: "run".into(),
        strict: false,
        parameters: json!({"type": "object"}),
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

fn feed(decoder: &mut ChatDecoder, chunks: &[String]) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    for data in chunks {
        events.extend(decoder.data(data).unwrap());
    }
    events.extend(decoder.data("[DONE]").unwrap());
    events
}

#[test]
fn history_maps_to_messages_with_calls_grouped_and_freeform_wrapped() {
    let input = vec![
        ResponseItem::developer_text("be careful"),
        ResponseItem::user_text("fix it"),
        ResponseItem::Reasoning {
            id: "rs_1".into(),
            summary: vec![],
            encrypted_content: None,
        },
        ResponseItem::Message {
            id: None,
            role: Role::Assistant,
            content: vec![ContentItem::OutputText {
                text: "looking".into(),
            }],
        },
        ResponseItem::FunctionCall {
            id: None,
            call_id: "c1".into(),
            name: "shell".into(),
            arguments: "{\"command\":[\"ls\"]}".into(),
        },
        ResponseItem::CustomToolCall {
            id: None,
            call_id: "c2".into(),
            name: "apply_patch".into(),
            input: "*** Begin Patch".into(),
        },
        ResponseItem::FunctionCallOutput {
            call_id: "c1".into(),
            output: "a.txt".into(),
        },
        ResponseItem::CustomToolCallOutput {
            call_id: "c2".into(),
            output: "ok".into(),
        },
    ];
    let messages = messages("sys", &input);
    assert_eq!(
        messages,
        vec![
            json!({"role": "system", "content": "sys"}),
            json!({"role": "system", "content": "be careful"}),
            json!({"role": "user", "content": "fix it"}),
            json!({"role": "assistant", "content": "looking", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"command\":[\"ls\"]}"}},
                {"id": "c2", "type": "function", "function": {"name": "apply_patch", "arguments": "{\"input\":\"*** Begin Patch\"}"}},
            ]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"}),
            json!({"role": "tool", "tool_call_id": "c2", "content": "ok"}),
        ]
    );
}

#[test]
fn body_streams_with_usage_and_tools_as_functions() {
    let request = ModelRequest {
        model: "m".into(),
        instructions: "sys".into(),
        input: vec![],
        tools: vec![shell_tool(), custom_tool()],
        parallel_tool_calls: true,
        prompt_cache_key: "k".into(),
        reasoning_effort: Some("high".into()),
        verbosity: None,
        output_schema: None,
    };
    let body = request_body(&request);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(body["tools"][0]["function"]["name"], "shell");
    assert!(body["tools"][0]["function"].get("strict").is_none());
    assert_eq!(
        body["tools"][1]["function"]["parameters"]["required"],
        json!(["input"])
    );
}

#[test]
fn split_and_interleaved_call_deltas_assemble_in_index_order() {
    let mut decoder = ChatDecoder::new(&[shell_tool(), custom_tool()]);
    let events = feed(
        &mut decoder,
        &[
            chunk(json!({"reasoning_content": "think"}), None),
            chunk(json!({"content": "ok "}), None),
            chunk(json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "apply_patch", "arguments": "{\"inp"}}]}), None),
            chunk(json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "shell", "arguments": "{}"}}]}), None),
            chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": "ut\": \"P\"}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
            json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13, "prompt_tokens_details": {"cached_tokens": 2}}}).to_string(),
        ],
    );
    assert_eq!(events[0], StreamEvent::ReasoningDelta("think".into()));
    assert_eq!(events[1], StreamEvent::TextDelta("ok ".into()));
    let items: Vec<&ResponseItem> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ItemDone(item) => Some(item),
            _ => None,
        })
        .collect();
    assert!(matches!(items[0], ResponseItem::Reasoning { id, .. } if id.starts_with("chat_rs_")));
    assert_eq!(items[1].assistant_text().as_deref(), Some("ok "));
    assert_eq!(
        items[2],
        &ResponseItem::FunctionCall {
            id: None,
            call_id: "a".into(),
            name: "shell".into(),
            arguments: "{}".into()
        }
    );
    assert_eq!(
        items[3],
        &ResponseItem::CustomToolCall {
            id: None,
            call_id: "b".into(),
            name: "apply_patch".into(),
            input: "P".into()
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
            usage.total_tokens
        ),
        (9, 2, 4, 13)
    );
}

fn failure(events: &[StreamEvent]) -> (String, bool) {
    match events.last() {
        Some(StreamEvent::Failed { error, retryable }) => (error.to_string(), *retryable),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn gaps_unclosed_arguments_two_ids_and_length_fail() {
    let mut decoder = ChatDecoder::new(&[shell_tool()]);
    let events = feed(
        &mut decoder,
        &[chunk(
            json!({"tool_calls": [{"index": 1, "id": "x", "function": {"name": "shell", "arguments": "{}"}}]}),
            None,
        )],
    );
    let (message, retryable) = failure(&events);
    assert!(
        message.contains("skipped index 0") && retryable,
        "{message}"
    );

    let mut decoder = ChatDecoder::new(&[shell_tool()]);
    let events = feed(
        &mut decoder,
        &[chunk(
            json!({"tool_calls": [{"index": 0, "id": "x", "function": {"name": "shell", "arguments": "{\"command\": ["}}]}),
            None,
        )],
    );
    let (message, retryable) = failure(&events);
    assert!(message.contains("never closed") && retryable, "{message}");

    let mut decoder = ChatDecoder::new(&[shell_tool()]);
    let events = decoder
        .data(&chunk(
            json!({"tool_calls": [{"index": 0, "id": "x"}]}),
            None,
        ))
        .unwrap();
    assert!(events.is_empty());
    let events = decoder
        .data(&chunk(
            json!({"tool_calls": [{"index": 0, "id": "y"}]}),
            None,
        ))
        .unwrap();
    assert!(failure(&events).0.contains("two ids"));

    let mut decoder = ChatDecoder::new(&[]);
    let events = feed(
        &mut decoder,
        &[chunk(json!({"content": "cut"}), Some("length"))],
    );
    let (message, retryable) = failure(&events);
    assert!(
        message.contains("finish_reason: length") && !retryable,
        "{message}"
    );
}

#[test]
fn a_complete_but_malformed_argument_text_goes_to_the_tool() {
    let mut decoder = ChatDecoder::new(&[shell_tool()]);
    let events = feed(
        &mut decoder,
        &[chunk(
            json!({"tool_calls": [{"index": 0, "id": "x", "function": {"name": "shell", "arguments": "{'bad': 1}"}}]}),
            None,
        )],
    );
    assert!(
        matches!(&events[0], StreamEvent::ItemDone(ResponseItem::FunctionCall { arguments, .. }) if arguments == "{'bad': 1}")
    );
}

#[test]
fn an_error_chunk_and_a_close_without_done() {
    let mut decoder = ChatDecoder::new(&[]);
    let events = decoder
        .data(
            &json!({"error": {"code": "context_length_exceeded", "message": "too long"}})
                .to_string(),
        )
        .unwrap();
    assert!(failure(&events).0.contains("context window"));
    // Some servers end after the finish reason without `[DONE]`.
    let mut decoder = ChatDecoder::new(&[]);
    decoder
        .data(&chunk(json!({"content": "hi"}), Some("stop")))
        .unwrap();
    assert!(matches!(
        decoder.closed().last(),
        Some(StreamEvent::Completed(_))
    ));
    // Without a finish reason, a close is a cut stream.
    let mut decoder = ChatDecoder::new(&[]);
    decoder
        .data(&chunk(json!({"content": "hi"}), None))
        .unwrap();
    assert!(decoder.closed().is_empty());
}
