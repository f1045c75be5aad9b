//! JSON round trips of the wire and rollout types, and their exact wire shapes.

use crate::errors::{ModelError, TurnError};
use crate::events::{AbortReason, Event, EventMsg};
use crate::ids::{ThreadId, TurnId};
use crate::items::{ContentItem, ReasoningSummary, ResponseItem, Role};
use crate::ops::{Op, ReviewDecision, Submission, UserInput};
use crate::policy::{AskForApproval, SandboxMode};
use crate::rollout::{RolloutLine, RolloutRecord};
use crate::usage::TokenUsage;
use pretty_assertions::assert_eq;
use serde::{de::DeserializeOwned, Serialize};
use serde_json::json;

fn roundtrip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: T) {
    let text = serde_json::to_string(&value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(back, value, "round trip through {text}");
}

#[test]
fn response_items_have_the_responses_api_shape() {
    let call = ResponseItem::FunctionCall {
        id: None,
        call_id: "call_1".into(),
        name: "shell".into(),
        arguments: r#"{"command":["true"]}"#.into(),
    };
    assert_eq!(
        serde_json::to_value(&call).unwrap(),
        json!({"type":"function_call","call_id":"call_1","name":"shell","arguments":"{\"command\":[\"true\"]}"})
    );
    let msg: ResponseItem = serde_json::from_value(json!({
        "type":"message","role":"assistant","id":"msg_1","status":"completed",
        "content":[{"type":"output_text","text":"hi","annotations":[]}]
    }))
    .unwrap();
    assert_eq!(msg.assistant_text().as_deref(), Some("hi"));
    for item in [
        call,
        msg,
        ResponseItem::user_text("hello"),
        ResponseItem::Reasoning {
            id: "rs_1".into(),
            summary: vec![ReasoningSummary::SummaryText { text: "t".into() }],
            encrypted_content: Some("xyz".into()),
        },
        ResponseItem::FunctionCallOutput {
            call_id: "call_1".into(),
            output: "ok".into(),
        },
        ResponseItem::CustomToolCall {
            id: Some("ctc_1".into()),
            call_id: "c2".into(),
            name: "apply_patch".into(),
            input: "*** Begin Patch".into(),
        },
        ResponseItem::CustomToolCallOutput {
            call_id: "c2".into(),
            output: "done".into(),
        },
        ResponseItem::Message {
            id: None,
            role: Role::Developer,
            content: vec![ContentItem::InputText { text: "x".into() }],
        },
    ] {
        roundtrip(item);
    }
}

#[test]
fn ops_and_events_round_trip() {
    roundtrip(Submission {
        id: "s1".into(),
        op: Op::UserInput {
            items: vec![UserInput::Text { text: "hi".into() }],
        },
    });
    roundtrip(Op::ExecApproval {
        call_id: "c".into(),
        decision: ReviewDecision::ApprovedForSession,
    });
    roundtrip(Op::OverrideTurnContext {
        model: Some("m".into()),
        approval_policy: Some(AskForApproval::UnlessTrusted),
        sandbox_mode: Some(SandboxMode::WorkspaceWrite),
        cwd: None,
        collaboration_mode: Some(crate::policy::CollaborationMode::Plan),
    });
    roundtrip(Op::Interrupt);
    roundtrip(Op::ExecApproval {
        call_id: "c".into(),
        decision: ReviewDecision::DeniedWithMessage {
            message: "use trash instead".into(),
        },
    });
    roundtrip(Op::RunUserShellCommand {
        command: "echo hi | wc -c".into(),
        timeout_ms: Some(1500),
    });
    // A model's command says nothing of `user_shell` on the wire (older readers agree).
    let begin = EventMsg::ExecCommandBegin {
        call_id: "c".into(),
        command: vec!["ls".into()],
        cwd: "/".into(),
        user_shell: false,
    };
    assert!(!serde_json::to_string(&begin)
        .unwrap()
        .contains("user_shell"));
    roundtrip(EventMsg::ExecCommandBegin {
        call_id: "c".into(),
        command: vec!["ls".into()],
        cwd: "/".into(),
        user_shell: true,
    });
    roundtrip(Event {
        id: "s1".into(),
        msg: EventMsg::Error {
            error: TurnError::Model(ModelError::QuotaExceeded {
                message: "no".into(),
            }),
            fatal: true,
        },
    });
    roundtrip(EventMsg::TurnComplete {
        turn_id: TurnId(3),
        last_agent_message: Some("done".into()),
        usage: TokenUsage {
            input_tokens: 5,
            ..TokenUsage::default()
        },
    });
    roundtrip(EventMsg::TurnAborted {
        turn_id: TurnId(1),
        reason: AbortReason::Interrupted,
    });
}

#[test]
fn collaboration_mode_aliases() {
    use crate::policy::CollaborationMode;
    for alias in ["default", "code", "execute", "pair_programming", "custom"] {
        let mode: CollaborationMode = serde_json::from_value(json!(alias)).unwrap();
        assert_eq!(mode, CollaborationMode::Default, "{alias}");
    }
    let plan: CollaborationMode = serde_json::from_value(json!("plan")).unwrap();
    assert_eq!(plan, CollaborationMode::Plan);
    assert_eq!(
        serde_json::to_value(CollaborationMode::Default).unwrap(),
        json!("default")
    );
}

#[test]
fn policy_names_match_codex() {
    assert_eq!(
        serde_json::to_value(AskForApproval::UnlessTrusted).unwrap(),
        json!("untrusted")
    );
    assert_eq!(
        serde_json::to_value(AskForApproval::OnRequest).unwrap(),
        json!("on-request")
    );
    assert_eq!(
        serde_json::to_value(SandboxMode::DangerFullAccess).unwrap(),
        json!("danger-full-access")
    );
}

#[test]
fn rollout_line_is_flat_with_type_and_payload() {
    let line = RolloutLine {
        timestamp: "2026-01-01T00:00:00Z".into(),
        record: RolloutRecord::ResponseItem(ResponseItem::user_text("x")),
    };
    let value = serde_json::to_value(&line).unwrap();
    assert_eq!(value["type"], json!("response_item"));
    assert_eq!(value["payload"]["type"], json!("message"));
    roundtrip(line);
    let id = ThreadId::new();
    assert_eq!(id.to_string().parse::<ThreadId>().unwrap(), id);
}

#[test]
fn an_image_output_goes_as_a_list_of_parts_and_text_outputs_stay_strings() {
    use crate::items::FunctionOutput;
    let image = ResponseItem::FunctionCallOutput {
        call_id: "c1".into(),
        output: FunctionOutput::Content(vec![ContentItem::InputImage {
            image_url: "data:image/png;base64,AA==".into(),
            detail: Some("original".into()),
        }]),
    };
    assert_eq!(
        serde_json::to_value(&image).unwrap(),
        serde_json::json!({"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_image", "image_url": "data:image/png;base64,AA==", "detail": "original"}
        ]})
    );
    roundtrip(image);
    // A rollout written before image outputs existed still loads.
    let old: ResponseItem =
        serde_json::from_str(r#"{"type":"function_call_output","call_id":"c2","output":"plain"}"#)
            .unwrap();
    assert_eq!(
        old,
        ResponseItem::FunctionCallOutput {
            call_id: "c2".into(),
            output: "plain".into(),
        }
    );
    roundtrip(ResponseItem::WebSearchCall {
        id: Some("ws_1".into()),
        status: Some("completed".into()),
        action: Some(serde_json::json!({"type": "search", "query": "q"})),
    });
}

#[test]
fn goal_events_and_ops_roundtrip() {
    use crate::goals::{GoalStatus, ThreadGoal};
    roundtrip(EventMsg::GoalUpdated {
        goal: ThreadGoal {
            thread_id: ThreadId::new(),
            objective: "ship".into(),
            status: GoalStatus::BudgetLimited,
            token_budget: Some(10),
            tokens_used: 12,
            time_used_seconds: 3,
            created_at: 1,
            updated_at: 2,
        },
        continuing: false,
    });
    roundtrip(Op::CreateGoal {
        objective: "ship".into(),
        token_budget: Some(5),
    });
}
