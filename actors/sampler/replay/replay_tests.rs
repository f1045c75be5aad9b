#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use troupe_messages::items::{ContentItem, Role};

fn call(id: &str) -> ResponseItem {
    ResponseItem::FunctionCall {
        id: None,
        call_id: id.into(),
        name: "shell".into(),
        arguments: "{}".into(),
    }
}

fn output(id: &str, text: &str) -> ResponseItem {
    ResponseItem::FunctionCallOutput {
        call_id: id.into(),
        output: serde_json::json!({"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.1}}).to_string().into(),
    }
}

fn answer(text: &str) -> ResponseItem {
    ResponseItem::Message {
        id: None,
        role: Role::Assistant,
        content: vec![ContentItem::OutputText { text: text.into() }],
    }
}

fn request(instructions: &str, input: Vec<ResponseItem>) -> ModelRequest {
    ModelRequest {
        model: "m".into(),
        instructions: instructions.into(),
        input,
        tools: vec![],
        parallel_tool_calls: false,
        prompt_cache_key: "k".into(),
        reasoning_effort: None,
        verbosity: None,
        output_schema: None,
    }
}

#[test]
fn responses_are_runs_of_model_items() {
    let input = vec![
        ResponseItem::user_text("go"),
        call("a"),
        call("b"),
        output("a", "1"),
        output("b", "2"),
        call("c"),
        output("c", "3"),
        answer("done"),
        ResponseItem::user_text("again"),
    ];
    assert_eq!(responses_in(&input), 3);
    assert_eq!(responses_in(&input[..1]), 0);
}

#[test]
fn durations_and_dates_do_not_count_but_outputs_and_instructions_do() {
    let recorded = RecordedRequest {
        instructions: "sys".into(),
        input: vec![
            ResponseItem::user_text("<current_date>2026-01-01</current_date>"),
            call("a"),
            output("a", "step"),
        ],
        output: vec![],
    };
    let mut same = request(
        "sys",
        vec![
            ResponseItem::user_text("<current_date>2026-12-02</current_date>"),
            call("a"),
            output("a", "step"),
        ],
    );
    if let ResponseItem::FunctionCallOutput { output, .. } = &mut same.input[2] {
        *output = output.text().replace("0.1", "2.5").into();
    }
    assert_eq!(first_difference(&recorded, &same), None);

    let drifted = request(
        "sys",
        vec![
            ResponseItem::user_text("<current_date>2026-12-02</current_date>"),
            call("a"),
            output("a", "stop"),
        ],
    );
    let difference = first_difference(&recorded, &drifted).unwrap();
    assert!(
        difference.starts_with("the result of tool call `a` differs (environment drift)"),
        "{difference}"
    );

    let changed = request("sys v2", same.input.clone());
    let difference = first_difference(&recorded, &changed).unwrap();
    assert!(
        difference.starts_with("the instructions differ from character 3"),
        "{difference}"
    );

    let shorter = request("sys", same.input[..2].to_vec());
    assert!(first_difference(&recorded, &shorter)
        .unwrap()
        .contains("the input holds 2 items, the recording 3"));
}
