use crate::protocol::UserInput;
use crate::rollout_turns::turns_from_rollout;
use crate::translate::{parse_turn_id, turn_wire_id, Out, Translator};
use serde_json::{json, Value};
use std::path::PathBuf;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ids::TurnId;
use troupe_messages::items::ResponseItem;
use troupe_messages::rollout::{RolloutLine, RolloutRecord};
use troupe_messages::usage::TokenUsage;

fn methods(outs: &[Out]) -> Vec<&'static str> {
    outs.iter()
        .map(|o| match o {
            Out::Notify { method, .. } | Out::Ask { method, .. } => *method,
            Out::AgentTurnEnded { .. } => "(agent turn ended)",
        })
        .collect()
}

fn params(out: &Out) -> &Value {
    match out {
        Out::Notify { params, .. } | Out::Ask { params, .. } => params,
        Out::AgentTurnEnded { .. } => &Value::Null,
    }
}

fn text(t: &str) -> Vec<UserInput> {
    vec![UserInput::Text {
        text: t.into(),
        text_elements: Vec::new(),
    }]
}

#[test]
fn turn_ids_are_uuid_v7s_that_round_trip_per_thread() {
    let thread = "019ae0f1-2b3c-7d4e-8f50-6a7b8c9d0e1f";
    let other = "019ae0f1-2b3c-7d4e-9f50-6a7b8c9d0e1f";
    let id = turn_wire_id(thread, TurnId(3));
    let uuid = uuid::Uuid::parse_str(&id).unwrap();
    assert_eq!(uuid.get_version_num(), 7);
    assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122);
    assert_ne!(id, turn_wire_id(other, TurnId(3)));
    assert_ne!(id, turn_wire_id(thread, TurnId(4)));
    assert_eq!(parse_turn_id(thread, &id), Some(TurnId(3)));
    // Another thread's turn, the thread itself, and other spellings are not this thread's.
    assert_eq!(parse_turn_id(other, &id), None);
    assert_eq!(parse_turn_id(thread, thread), None);
    assert_eq!(parse_turn_id(thread, "turn-3"), None);
    assert_eq!(parse_turn_id(thread, "3"), None);
}

#[test]
fn a_turn_becomes_codex_notifications_in_order() {
    let mut t = Translator::new("th".into());
    t.expect_input(text("hi"));
    let start = t.on_event(&EventMsg::TurnStarted { turn_id: TurnId(1) }, 1000);
    assert_eq!(
        methods(&start),
        vec![
            "thread/status/changed",
            "turn/started",
            "item/started",
            "item/completed"
        ]
    );
    assert_eq!(
        params(&start[0])["status"],
        json!({"type": "active", "activeFlags": []})
    );
    assert_eq!(params(&start[3])["item"]["content"][0]["text"], "hi");
    let delta = t.on_event(&EventMsg::AgentMessageDelta { delta: "do".into() }, 1001);
    assert_eq!(
        methods(&delta),
        vec!["item/started", "item/agentMessage/delta"]
    );
    let item_id = params(&delta[1])["itemId"].clone();
    let more = t.on_event(&EventMsg::AgentMessageDelta { delta: "ne".into() }, 1002);
    assert_eq!(methods(&more), vec!["item/agentMessage/delta"]);
    let done = t.on_event(
        &EventMsg::AgentMessage {
            message: "done".into(),
        },
        1003,
    );
    assert_eq!(params(&done[0])["item"]["id"], item_id);
    assert_eq!(params(&done[0])["item"]["text"], "done");
    let usage = t.on_event(
        &EventMsg::TokenCount {
            last: TokenUsage {
                total_tokens: 5,
                ..Default::default()
            },
            total: TokenUsage {
                total_tokens: 9,
                ..Default::default()
            },
        },
        1004,
    );
    assert_eq!(params(&usage[0])["tokenUsage"]["total"]["totalTokens"], 9);
    let end = t.on_event(
        &EventMsg::TurnComplete {
            turn_id: TurnId(1),
            last_agent_message: Some("done".into()),
            usage: TokenUsage::default(),
        },
        3000,
    );
    assert_eq!(
        methods(&end),
        vec!["thread/status/changed", "turn/completed"]
    );
    assert_eq!(params(&end[0])["status"], json!({"type": "idle"}));
    let turn = &params(&end[1])["turn"];
    assert_eq!(turn["status"], "completed");
    assert_eq!(turn["durationMs"], 2000);
    // Codex's summary view: the final agent message only.
    assert_eq!(turn["itemsView"], "summary");
    assert_eq!(turn["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(turn["items"][0]["type"], "agentMessage");
    assert_eq!(t.current_turn(), None);
}

#[test]
fn commands_approvals_and_aborts() {
    let mut t = Translator::new("th".into());
    t.on_event(&EventMsg::TurnStarted { turn_id: TurnId(2) }, 0);
    let ask = t.on_event(
        &EventMsg::ExecApprovalRequest {
            call_id: "c1".into(),
            command: vec!["touch".into(), "a b".into()],
            cwd: PathBuf::from("/w"),
            reason: Some("why".into()),
            sandbox_retry: None,
        },
        5,
    );
    assert_eq!(
        methods(&ask),
        vec![
            "thread/status/changed",
            "item/commandExecution/requestApproval"
        ]
    );
    assert_eq!(
        params(&ask[0])["status"]["activeFlags"],
        json!(["waitingOnApproval"])
    );
    assert_eq!(params(&ask[1])["command"], "touch 'a b'");
    assert_eq!(params(&ask[1])["turnId"], turn_wire_id("th", TurnId(2)));
    let resolved = t.approval_resolved("c1");
    assert_eq!(params(&resolved[0])["status"]["activeFlags"], json!([]));
    t.on_event(
        &EventMsg::ExecCommandBegin {
            call_id: "c1".into(),
            command: vec!["ls".into()],
            cwd: PathBuf::from("/w"),
            user_shell: false,
        },
        6,
    );
    let end = t.on_event(
        &EventMsg::ExecCommandEnd {
            call_id: "c1".into(),
            command: vec!["ls".into()],
            exit_code: Some(1),
            aggregated_output: "out".into(),
            duration_ms: 7,
            timed_out: false,
            user_shell: false,
        },
        7,
    );
    assert_eq!(
        methods(&end),
        vec!["item/commandExecution/outputDelta", "item/completed"]
    );
    let item = &params(&end[1])["item"];
    assert_eq!(item["status"], "failed");
    assert_eq!(item["cwd"], "/w");
    assert_eq!(item["exitCode"], 1);
    let aborted = t.on_event(
        &EventMsg::TurnAborted {
            turn_id: TurnId(2),
            reason: AbortReason::Failed,
        },
        8,
    );
    assert_eq!(params(&aborted[1])["turn"]["status"], "failed");
}

#[test]
fn a_rollout_gives_back_its_turns_with_items() {
    let line = |record| RolloutLine {
        timestamp: "2026-12-01T00:00:00.000Z".into(),
        record,
    };
    let lines = vec![
        line(RolloutRecord::ResponseItem(ResponseItem::user_text(
            "first",
        ))),
        line(RolloutRecord::Event(EventMsg::TurnStarted {
            turn_id: TurnId(1),
        })),
        line(RolloutRecord::Event(EventMsg::AgentMessage {
            message: "one".into(),
        })),
        line(RolloutRecord::Event(EventMsg::TurnComplete {
            turn_id: TurnId(1),
            last_agent_message: None,
            usage: TokenUsage::default(),
        })),
        line(RolloutRecord::ResponseItem(ResponseItem::user_text(
            "second",
        ))),
        line(RolloutRecord::Event(EventMsg::TurnStarted {
            turn_id: TurnId(2),
        })),
    ];
    let turns = turns_from_rollout("th", &lines);
    assert_eq!(turns.len(), 2);
    let first = serde_json::to_value(&turns[0]).unwrap_or_default();
    assert_eq!(first["id"], turn_wire_id("th", TurnId(1)));
    assert_eq!(first["rootTurnId"], first["id"]);
    assert_eq!(first["items"][0]["content"][0]["text"], "first");
    assert_eq!(first["items"][1]["text"], "one");
    let second = serde_json::to_value(&turns[1]).unwrap_or_default();
    assert_eq!(second["status"], "inProgress");
    assert_eq!(second["items"][0]["content"][0]["text"], "second");
}

#[test]
fn a_sub_agents_approval_is_asked_by_the_root_naming_the_agent() {
    let mut root = Translator::new("root".into());
    root.on_event(&EventMsg::TurnStarted { turn_id: TurnId(1) }, 0);
    let child: troupe_messages::ids::ThreadId =
        "00000000-0000-7000-8000-0000000000c1".parse().unwrap();
    let relayed = |msg| EventMsg::AgentEvent {
        thread_id: child,
        task_path: "/root/w1".into(),
        msg: Box::new(msg),
    };
    assert!(root
        .on_event(&relayed(EventMsg::TurnStarted { turn_id: TurnId(3) }), 1)
        .is_empty());
    let ask = root.on_event(
        &relayed(EventMsg::ExecApprovalRequest {
            call_id: "c9".into(),
            command: vec!["touch".into(), "x".into()],
            cwd: PathBuf::from("/w"),
            reason: None,
            sandbox_retry: None,
        }),
        2,
    );
    let Some(Out::Ask { agent, params, .. }) = ask.first() else {
        panic!("no ask: {ask:?}");
    };
    assert_eq!(agent.as_deref(), Some(child.to_string().as_str()));
    assert_eq!(params["threadId"], child.to_string());
    assert_eq!(
        params["turnId"],
        turn_wire_id(&child.to_string(), TurnId(3))
    );
    assert_eq!(
        params["reason"],
        "agent /root/w1: `touch x` requires approval"
    );
    assert_eq!(params["kind"], "command");
    // The root itself does not wait: its status is untouched.
    assert_eq!(
        serde_json::to_value(root.status()).unwrap()["activeFlags"],
        json!([])
    );
    let ended = root.on_event(
        &relayed(EventMsg::TurnAborted {
            turn_id: TurnId(3),
            reason: AbortReason::Interrupted,
        }),
        3,
    );
    assert_eq!(
        ended,
        vec![Out::AgentTurnEnded {
            thread_id: child.to_string()
        }]
    );
}

#[test]
fn a_denied_command_ends_the_wait_when_its_output_is_recorded() {
    let mut t = Translator::new("th".into());
    t.on_event(&EventMsg::TurnStarted { turn_id: TurnId(1) }, 0);
    t.on_event(
        &EventMsg::ExecApprovalRequest {
            call_id: "c1".into(),
            command: vec!["rm".into()],
            cwd: PathBuf::from("/w"),
            reason: None,
            sandbox_retry: None,
        },
        1,
    );
    let waiting = serde_json::to_value(t.status()).unwrap();
    assert_eq!(waiting["activeFlags"], json!(["waitingOnApproval"]));
    let out = t.on_event(
        &EventMsg::ItemRecorded {
            item: ResponseItem::CustomToolCallOutput {
                call_id: "c1".into(),
                output: "rejected".into(),
            },
        },
        2,
    );
    assert_eq!(methods(&out), vec!["thread/status/changed"]);
    assert_eq!(
        serde_json::to_value(t.status()).unwrap()["activeFlags"],
        json!([])
    );
}

/// A command the user denies never begins; the refusal recorded as its output keeps it in the
/// transcript as `declined`, live and when the rollout is read back. An approved one whose
/// output is recorded after it ran is not declined.
#[test]
fn a_denied_command_stays_as_a_declined_item_live_and_in_the_rollout() {
    use troupe_messages::items::FunctionOutput;
    let asked = |id: &str| EventMsg::ExecApprovalRequest {
        call_id: id.into(),
        command: vec!["touch".into(), "x".into()],
        cwd: PathBuf::from("/w"),
        reason: None,
        sandbox_retry: None,
    };
    let output = |id: &str, text: &str| ResponseItem::FunctionCallOutput {
        call_id: id.into(),
        output: FunctionOutput::Text(text.into()),
    };
    let refusal = "exec command rejected by user";
    let mut t = Translator::new("th".into());
    t.on_event(&EventMsg::TurnStarted { turn_id: TurnId(1) }, 0);
    t.on_event(&asked("d1"), 1);
    let denied = t.on_event(
        &EventMsg::ItemRecorded {
            item: output("d1", refusal),
        },
        2,
    );
    assert_eq!(
        methods(&denied),
        vec!["thread/status/changed", "item/started", "item/completed"]
    );
    let item = &params(&denied[2])["item"];
    assert_eq!(item["type"], "commandExecution");
    assert_eq!(item["status"], "declined");
    assert_eq!(item["command"], "touch x");
    // Approved: it ends, then its output is recorded; nothing declined.
    t.on_event(&asked("a1"), 3);
    t.on_event(
        &EventMsg::ExecCommandEnd {
            call_id: "a1".into(),
            command: vec!["touch".into(), "x".into()],
            exit_code: Some(0),
            aggregated_output: String::new(),
            duration_ms: 1,
            timed_out: false,
            user_shell: false,
        },
        4,
    );
    let ran = t.on_event(
        &EventMsg::ItemRecorded {
            item: output("a1", "ok"),
        },
        5,
    );
    assert!(methods(&ran).is_empty(), "{:?}", methods(&ran));

    let line = |record| RolloutLine {
        timestamp: "2026-12-01T00:00:00.000Z".into(),
        record,
    };
    let lines = vec![
        line(RolloutRecord::Event(EventMsg::TurnStarted {
            turn_id: TurnId(1),
        })),
        line(RolloutRecord::Event(asked("d1"))),
        line(RolloutRecord::ResponseItem(output(
            "d1",
            &format!("{refusal}. The user said what to do instead:\nnot that"),
        ))),
    ];
    let turns = turns_from_rollout("th", &lines);
    let items = serde_json::to_value(&turns[0].items).unwrap_or_default();
    assert_eq!(items[0]["status"], "declined", "{items}");
    assert_eq!(items[0]["id"], "d1");
}
