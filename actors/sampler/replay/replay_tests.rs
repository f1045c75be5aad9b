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
        usage: TokenUsage::default(),
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

mod compacted {
    use super::*;
    use crate::sampler::replay::recording::{parse, RecordedTurn};
    use crate::turn::compact::{SUMMARY_PREFIX, SUMMARY_PROMPT};
    use troupe_messages::events::EventMsg;
    use troupe_messages::ids::TurnId;
    use troupe_messages::rollout::{
        CompactedRecord, HistoryPart, RolloutRecord, TurnContextRecord,
    };

    fn context() -> RolloutRecord {
        RolloutRecord::TurnContext(TurnContextRecord {
            turn_id: TurnId(1),
            settings: Box::new(crate::thread_store::test_support::settings()),
        })
    }

    fn started() -> RolloutRecord {
        RolloutRecord::Event(EventMsg::TurnStarted { turn_id: TurnId(1) })
    }

    fn usage(input: u64) -> RolloutRecord {
        let last = TokenUsage {
            input_tokens: input,
            ..TokenUsage::default()
        };
        RolloutRecord::Event(EventMsg::TokenCount { last, total: last })
    }

    fn item(item: ResponseItem) -> RolloutRecord {
        RolloutRecord::ResponseItem(item)
    }

    /// Keeps the user message at `keep` and adds the summary.
    fn compacted(keep: usize, summary: &str) -> RolloutRecord {
        RolloutRecord::Compacted(CompactedRecord {
            turn_id: TurnId(1),
            replacement_history: None,
            parts: Some(vec![
                HistoryPart::New {
                    item: ResponseItem::user_text(format!("{SUMMARY_PREFIX}{summary}")),
                },
                HistoryPart::Kept {
                    start: keep,
                    count: 1,
                },
            ]),
        })
    }

    #[test]
    fn a_compaction_is_a_request_answered_by_its_summary_and_later_requests_count_from_it() {
        let records = vec![
            context(),
            item(ResponseItem::user_text("go")),
            started(),
            item(call("a")),
            usage(11),
            item(output("a", "big")),
            // Over the limit: the compaction's usage, then its line.
            usage(22),
            compacted(0, "did a"),
            item(answer("done")),
            usage(33),
            // `/compact` between turns.
            context(),
            started(),
            usage(44),
            compacted(1, "all of it"),
            context(),
            item(ResponseItem::user_text("more")),
            started(),
            item(answer("more done")),
            usage(55),
        ];
        let recording = parse(records).unwrap();
        assert_eq!(
            recording.turns,
            [
                RecordedTurn::Prompt("go".into()),
                RecordedTurn::Compact,
                RecordedTurn::Prompt("more".into())
            ]
        );
        let usages: Vec<u64> = recording
            .requests
            .iter()
            .map(|r| r.usage.input_tokens)
            .collect();
        assert_eq!(usages, [11, 22, 33, 44, 55]);
        let first_summary = &recording.requests[1];
        assert_eq!(
            first_summary.input.last(),
            Some(&ResponseItem::user_text(SUMMARY_PROMPT))
        );
        assert_eq!(first_summary.output, vec![answer("did a")]);
        // Every recorded request's input is placed back at its own index.
        for (index, request) in recording.requests.iter().enumerate() {
            assert_eq!(
                request_index(&recording, &request.input),
                Ok(index),
                "{request:#?}"
            );
        }
        let unknown = vec![ResponseItem::user_text(format!("{SUMMARY_PREFIX}other"))];
        assert!(request_index(&recording, &unknown)
            .unwrap_err()
            .contains("summary the recording does not"));
    }
}
