use super::*;
use troupe_messages::ids::TurnId;
use troupe_messages::usage::TokenUsage;

fn records() -> (RolloutRecord, RolloutRecord, RolloutRecord, RolloutRecord) {
    let boundary = RolloutRecord::Event(EventMsg::TurnComplete {
        turn_id: TurnId(1),
        last_agent_message: None,
        usage: TokenUsage::default(),
    });
    let result = RolloutRecord::ResponseItem(ResponseItem::FunctionCallOutput {
        call_id: "c".into(),
        output: "ok".into(),
    });
    let item = RolloutRecord::ResponseItem(ResponseItem::user_text("hi"));
    let event = RolloutRecord::Event(EventMsg::Warning {
        message: "w".into(),
    });
    (boundary, result, item, event)
}

#[test]
fn the_fsync_policy_decides_which_records_must_be_durable() {
    let (boundary, result, item, event) = records();
    let table = [
        (FsyncPolicy::EveryItem, [true, true, true, true]),
        (FsyncPolicy::ToolResults, [true, true, false, false]),
        (FsyncPolicy::TurnBoundaries, [true, false, false, false]),
    ];
    for (policy, expected) in table {
        let got = [&boundary, &result, &item, &event].map(|r| needs_sync(policy, r));
        assert_eq!(got, expected, "{policy:?}");
    }
}

#[test]
fn deltas_and_shutdown_are_not_persisted_turn_events_are() {
    assert!(!persisted(&EventMsg::AgentMessageDelta {
        delta: "x".into()
    }));
    assert!(!persisted(&EventMsg::ShutdownComplete));
    assert!(persisted(&EventMsg::TurnStarted { turn_id: TurnId(1) }));
    assert!(persisted(&EventMsg::TokenCount {
        last: TokenUsage::default(),
        total: TokenUsage::default(),
    }));
}
