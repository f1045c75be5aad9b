#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::events;

fn script() -> Vec<Value> {
    vec![
        events::created("r"),
        events::output_text_delta("m", "hi"),
        events::assistant_message_done("m", "hi"),
        events::function_call_done("c1", "shell", "{\"command\":[\"ls\"]}"),
        events::custom_tool_call_done("c2", "apply_patch", "PATCH"),
        events::completed("r", 100, 40, 7, 0),
    ]
}

fn data_of(frames: &[Vec<String>]) -> Vec<String> {
    frames
        .concat()
        .iter()
        .flat_map(|f| {
            f.lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn chat_frames_say_the_same_thing() {
    let all = script();
    let data = data_of(&frames(Wire::Chat, &all, &all));
    assert_eq!(data.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let text: String = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(text, "hi");
    let args: String = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0"))
        .filter(|call| call["index"] == 1)
        .filter_map(|call| call.pointer("/function/arguments").and_then(Value::as_str))
        .collect();
    assert_eq!(args, "{\"input\":\"PATCH\"}");
    let finish = chunks
        .iter()
        .find_map(|c| {
            c.pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
        })
        .unwrap();
    assert_eq!(finish, "tool_calls");
    let usage = chunks.iter().find_map(|c| c.get("usage")).unwrap();
    assert_eq!(usage["prompt_tokens"], 100);
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 40);
}

#[test]
fn anthropic_frames_say_the_same_thing_and_a_cut_is_at_the_same_event() {
    let all = script();
    let data = data_of(&frames(Wire::Anthropic, &all, &all));
    let events: Vec<Value> = data
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(events[0]["message"]["usage"]["input_tokens"], 60);
    assert_eq!(events[0]["message"]["usage"]["cache_read_input_tokens"], 40);
    let tool_uses = events
        .iter()
        .filter(|e| e["content_block"]["type"] == "tool_use")
        .count();
    assert_eq!(tool_uses, 2);
    assert_eq!(events.last().unwrap()["type"], "message_stop");
    let stop = events
        .iter()
        .find(|e| e["type"] == "message_delta")
        .unwrap();
    assert_eq!(stop["delta"]["stop_reason"], "tool_use");
    // A stream cut after 2 source events holds only their frames.
    let cut = frames(Wire::Anthropic, &all[..2], &all);
    assert_eq!(cut.len(), 2);
    assert!(!data_of(&cut).iter().any(|d| d.contains("message_stop")));
}
