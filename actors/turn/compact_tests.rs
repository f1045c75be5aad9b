use super::compact::{
    apply_parts, compacted_history, compaction_parts, is_user_input, summary_request_input,
    LatestRequest, SUMMARY_PREFIX, SUMMARY_PROMPT,
};
use pretty_assertions::assert_eq;
use troupe_messages::items::ResponseItem;
use troupe_messages::rollout::HistoryPart;

fn initial() -> Vec<ResponseItem> {
    vec![
        ResponseItem::developer_text("<permissions instructions>…"),
        ResponseItem::user_text("<environment_context>…</environment_context>"),
    ]
}

fn call(id: &str) -> ResponseItem {
    ResponseItem::FunctionCall {
        id: None,
        call_id: id.into(),
        name: "shell".into(),
        arguments: "{}".into(),
    }
}

#[test]
fn summary_goes_before_the_last_user_message() {
    let mut history = initial();
    history.extend([
        ResponseItem::user_text("first task"),
        call("a"),
        ResponseItem::FunctionCallOutput {
            call_id: "a".into(),
            output: "x".into(),
        },
        ResponseItem::user_text("second task"),
        call("b"),
    ]);
    let out = compacted_history(
        &initial(),
        &history,
        "did things",
        LatestRequest::AfterSummary,
    );
    let mut expected = initial();
    expected.push(ResponseItem::user_text("first task"));
    expected.push(ResponseItem::user_text(format!(
        "{SUMMARY_PREFIX}did things"
    )));
    expected.push(ResponseItem::user_text("second task"));
    assert_eq!(out, expected);
}

#[test]
fn old_summaries_and_context_are_not_user_input() {
    assert!(!is_user_input(&ResponseItem::user_text(format!(
        "{SUMMARY_PREFIX}old"
    ))));
    assert!(!is_user_input(&ResponseItem::user_text(
        "<environment_context>x"
    )));
    assert!(!is_user_input(&ResponseItem::developer_text("dev")));
    assert!(is_user_input(&ResponseItem::user_text("real")));
    let input = summary_request_input(&initial());
    assert_eq!(input.last(), Some(&ResponseItem::user_text(SUMMARY_PROMPT)));
    assert!(!is_user_input(input.last().unwrap()));
}

#[test]
fn earlier_user_messages_are_bounded_newest_first() {
    let mut history = initial();
    for i in 0..100 {
        history.push(ResponseItem::user_text(format!("{i}:{}", "w".repeat(4000))));
    }
    let out = compacted_history(&initial(), &history, "s", LatestRequest::AfterSummary);
    let kept = out.len() - initial().len() - 2;
    assert!(kept > 0 && kept < 99, "kept {kept}");
    // The newest earlier message is the one right before the summary.
    let before_summary = &out[out.len() - 3];
    assert!(
        matches!(before_summary, ResponseItem::Message { content, .. } if format!("{content:?}").contains("98:"))
    );
}

#[test]
fn manual_compaction_without_user_input_ends_with_the_summary() {
    let out = compacted_history(
        &initial(),
        &initial(),
        "nothing yet",
        LatestRequest::AfterSummary,
    );
    assert_eq!(
        out.last(),
        Some(&ResponseItem::user_text(format!(
            "{SUMMARY_PREFIX}nothing yet"
        )))
    );
}

#[test]
fn between_turns_the_summary_comes_last() {
    let mut history = initial();
    history.push(ResponseItem::user_text("answered already"));
    let out = compacted_history(&initial(), &history, "sum", LatestRequest::BeforeSummary);
    assert_eq!(
        &out[2..],
        [
            ResponseItem::user_text("answered already"),
            ResponseItem::user_text(format!("{SUMMARY_PREFIX}sum"))
        ]
    );
}

#[test]
fn parts_keep_by_position_and_carry_only_the_summary() {
    let mut history = initial();
    history.extend([
        ResponseItem::user_text("first task"),
        call("a"),
        ResponseItem::user_text("second task"),
    ]);
    let parts = compaction_parts(&initial(), &history, "sum", LatestRequest::AfterSummary);
    assert_eq!(
        parts,
        vec![
            HistoryPart::Kept { start: 0, count: 2 },
            HistoryPart::Kept { start: 2, count: 1 },
            HistoryPart::New {
                item: ResponseItem::user_text(format!("{SUMMARY_PREFIX}sum")),
            },
            HistoryPart::Kept { start: 4, count: 1 },
        ]
    );
    assert_eq!(
        apply_parts(&history, &parts).unwrap(),
        compacted_history(&initial(), &history, "sum", LatestRequest::AfterSummary)
    );
    // Applied to a shorter history (a damaged rollout), it fails instead of guessing.
    let err = apply_parts(&history[..3], &parts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a compaction keeps items 4..5 of a history of 3 items"
    );
}
