use super::*;
use pretty_assertions::assert_eq;

#[test]
fn completed_sums_total_tokens() {
    let ev = completed("resp_1", 100, 40, 20, 5);
    assert_eq!(ev["type"], "response.completed");
    assert_eq!(ev["response"]["usage"]["total_tokens"], 120);
    assert_eq!(
        ev["response"]["usage"]["input_tokens_details"]["cached_tokens"],
        40
    );
    assert_eq!(
        ev["response"]["usage"]["output_tokens_details"]["reasoning_tokens"],
        5
    );
}

#[test]
fn function_call_done_shape() {
    let ev = function_call_done("call_1", "shell", r#"{"command":["ls"]}"#);
    assert_eq!(ev["type"], "response.output_item.done");
    assert_eq!(
        ev["item"],
        json!({
            "type": "function_call",
            "id": "fc_call_1",
            "call_id": "call_1",
            "name": "shell",
            "arguments": "{\"command\":[\"ls\"]}",
            "status": "completed",
        })
    );
}

#[test]
fn message_done_shape() {
    let ev = assistant_message_done("msg_1", "hi");
    assert_eq!(ev["item"]["content"][0]["type"], "output_text");
    assert_eq!(ev["item"]["content"][0]["text"], "hi");
    assert_eq!(ev["item"]["role"], "assistant");
}

#[test]
fn output_index_is_replaced() {
    let ev = with_output_index(function_call_done("c", "n", "{}"), 3);
    assert_eq!(ev["output_index"], 3);
}

#[test]
fn failed_shape() {
    let ev = failed("r", "server_error", "boom");
    assert_eq!(ev["response"]["error"]["code"], "server_error");
    assert_eq!(ev["response"]["error"]["message"], "boom");
}
