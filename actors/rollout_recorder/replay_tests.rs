use super::*;
use pretty_assertions::assert_eq;
use troupe_messages::ids::TurnId;
use troupe_messages::rollout::{CompactedRecord, TurnContextRecord};

fn line(record: RolloutRecord) -> RolloutLine {
    RolloutLine {
        timestamp: "2026-01-01T00:00:00.000Z".into(),
        record,
    }
}

fn item(item: ResponseItem) -> RolloutLine {
    line(RolloutRecord::ResponseItem(item))
}

fn event(msg: EventMsg) -> RolloutLine {
    line(RolloutRecord::Event(msg))
}

fn call(id: &str) -> ResponseItem {
    ResponseItem::FunctionCall {
        id: None,
        call_id: id.into(),
        name: "shell".into(),
        arguments: "{}".into(),
    }
}

fn output(id: &str) -> ResponseItem {
    ResponseItem::FunctionCallOutput {
        call_id: id.into(),
        output: "ok".into(),
    }
}

#[test]
fn history_is_the_items_in_order_with_compactions_applied() {
    let usage = TokenUsage {
        total_tokens: 42,
        ..TokenUsage::default()
    };
    let lines = vec![
        item(ResponseItem::user_text("<environment_context>")),
        line(RolloutRecord::TurnContext(TurnContextRecord {
            turn_id: TurnId(1),
            settings: Box::new(crate::thread_store::test_support::settings()),
        })),
        item(ResponseItem::user_text("a skill body")),
        item(ResponseItem::user_text("first   question\nwith lines")),
        event(EventMsg::TurnStarted { turn_id: TurnId(1) }),
        item(call("c1")),
        item(output("c1")),
        event(EventMsg::TokenCount {
            last: usage,
            total: usage,
        }),
        line(RolloutRecord::Compacted(CompactedRecord {
            turn_id: TurnId(1),
            replacement_history: Some(vec![ResponseItem::user_text("summary")]),
            parts: None,
        })),
        item(ResponseItem::user_text("second")),
        event(EventMsg::TurnComplete {
            turn_id: TurnId(1),
            last_agent_message: None,
            usage,
        }),
    ];
    let replayed = replay(&lines);
    assert_eq!(
        replayed.history,
        vec![
            ResponseItem::user_text("summary"),
            ResponseItem::user_text("second")
        ]
    );
    assert_eq!(replayed.tracker.title, "first question with lines");
    assert_eq!(replayed.tracker.tokens.total_tokens, 42);
    assert_eq!(replayed.tracker.status, ThreadStatus::Completed);
}

#[test]
fn status_follows_the_last_turn_ending() {
    let started = event(EventMsg::TurnStarted { turn_id: TurnId(1) });
    let cases = [
        (vec![], ThreadStatus::New),
        (vec![started.clone()], ThreadStatus::Incomplete),
        (
            vec![
                started.clone(),
                event(EventMsg::TurnAborted {
                    turn_id: TurnId(1),
                    reason: AbortReason::Interrupted,
                }),
            ],
            ThreadStatus::Interrupted,
        ),
        (
            vec![
                started,
                event(EventMsg::TurnAborted {
                    turn_id: TurnId(1),
                    reason: AbortReason::Failed,
                }),
            ],
            ThreadStatus::Failed,
        ),
    ];
    for (lines, status) in cases {
        assert_eq!(replay(&lines).tracker.status, status, "{lines:?}");
    }
}

#[test]
fn calls_without_outputs_are_dangling() {
    let history = vec![
        call("a"),
        output("a"),
        call("b"),
        ResponseItem::CustomToolCall {
            id: None,
            call_id: "c".into(),
            name: "apply_patch".into(),
            input: "x".into(),
        },
    ];
    assert_eq!(
        dangling_calls(&history),
        vec![("b".to_string(), false), ("c".to_string(), true)]
    );
}

#[test]
fn long_titles_are_shortened() {
    let title = title_of(&"word ".repeat(100));
    assert_eq!(title.chars().count(), TITLE_CHARS);
    assert!(title.ends_with('…'));
}

#[test]
fn a_compaction_by_reference_rebuilds_the_history_it_names() {
    use troupe_messages::rollout::HistoryPart;
    let compacted = |parts| {
        line(RolloutRecord::Compacted(CompactedRecord {
            turn_id: TurnId(1),
            replacement_history: None,
            parts: Some(parts),
        }))
    };
    let lines = vec![
        item(ResponseItem::user_text("<environment_context>")),
        item(ResponseItem::user_text("old question")),
        item(call("c1")),
        item(output("c1")),
        item(ResponseItem::user_text("current question")),
        compacted(vec![
            HistoryPart::Kept { start: 0, count: 2 },
            HistoryPart::New {
                item: ResponseItem::user_text("summary"),
            },
            HistoryPart::Kept { start: 4, count: 1 },
        ]),
        item(ResponseItem::user_text("after")),
    ];
    let replayed = replay(&lines);
    assert!(replayed.errors.is_empty(), "{:?}", replayed.errors);
    assert_eq!(
        replayed.history,
        vec![
            ResponseItem::user_text("<environment_context>"),
            ResponseItem::user_text("old question"),
            ResponseItem::user_text("summary"),
            ResponseItem::user_text("current question"),
            ResponseItem::user_text("after"),
        ]
    );
    // A reference past the end is reported, never silently dropped.
    let mut broken = lines[..5].to_vec();
    broken.push(compacted(vec![HistoryPart::Kept { start: 3, count: 9 }]));
    let replayed = replay(&broken);
    assert_eq!(replayed.errors.len(), 1, "{:?}", replayed.errors);
    assert!(
        replayed.errors[0].starts_with("line 7: "),
        "{:?}",
        replayed.errors
    );
}
