use super::prompt::{output_item, tool_calls, user_message};
use troupe_messages::items::ResponseItem;
use troupe_messages::ops::UserInput;
use troupe_messages::tools::{ToolOutput, ToolPayload};

#[test]
fn calls_are_taken_in_order_of_both_kinds() {
    let items = vec![
        ResponseItem::user_text("ignored"),
        ResponseItem::FunctionCall {
            id: None,
            call_id: "a".into(),
            name: "shell".into(),
            arguments: "{}".into(),
        },
        ResponseItem::CustomToolCall {
            id: None,
            call_id: "b".into(),
            name: "apply_patch".into(),
            input: "x".into(),
        },
    ];
    let calls = tool_calls(&items);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].call_id, "a");
    assert_eq!(calls[1].payload, ToolPayload::Custom { input: "x".into() });
}

#[test]
fn outputs_match_the_call_kind() {
    let out = ToolOutput {
        call_id: "b".into(),
        content: "ok".into(),
        success: true,
        custom: true,
        parts: Vec::new(),
    };
    assert_eq!(
        output_item(&out),
        ResponseItem::CustomToolCallOutput {
            call_id: "b".into(),
            output: "ok".into()
        }
    );
    let input = vec![
        UserInput::Text { text: "one".into() },
        UserInput::Text { text: "two".into() },
    ];
    let ResponseItem::Message { content, .. } = user_message(&input) else {
        panic!()
    };
    assert_eq!(content.len(), 2);
}
