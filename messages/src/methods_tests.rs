//! The small predicates on contract types that callers rely on instead of matching by hand.

use crate::events::EventMsg;
use crate::tools::{ToolCall, ToolPayload};

#[test]
fn only_streaming_pieces_are_deltas() {
    let delta = |text: &str| EventMsg::AgentMessageDelta { delta: text.into() };
    assert!(delta("a").is_delta());
    assert!(EventMsg::AgentReasoningDelta { delta: "r".into() }.is_delta());
    assert!(!EventMsg::AgentMessage {
        message: "a".into()
    }
    .is_delta());
    assert!(!EventMsg::AgentReasoning { text: "r".into() }.is_delta());
    assert!(!EventMsg::ShutdownComplete.is_delta());
    assert!(EventMsg::ExecCommandOutputDelta {
        call_id: "c".into(),
        stream: crate::events::ExecOutputStream::Stdout,
        chunk: "x".into(),
    }
    .is_delta());
    // A sub-agent's relayed delta is one; its relayed finished items are not.
    let relayed = |msg| EventMsg::AgentEvent {
        thread_id: crate::ids::ThreadId(uuid::Uuid::nil()),
        task_path: "/root/a".into(),
        msg: Box::new(msg),
    };
    assert!(relayed(delta("a")).is_delta());
    assert!(!relayed(EventMsg::ShutdownComplete).is_delta());
}

#[test]
fn a_call_is_custom_by_its_payload() {
    let call = |payload| ToolCall {
        call_id: "c".into(),
        tool_name: "apply_patch".into(),
        payload,
    };
    assert!(call(ToolPayload::Custom { input: "x".into() }).is_custom());
    assert!(!call(ToolPayload::Function {
        arguments: "{}".into()
    })
    .is_custom());
}
