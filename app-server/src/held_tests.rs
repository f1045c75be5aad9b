use super::*;
use std::io::Write;
use troupe_messages::events::EventMsg;
use troupe_messages::rollout::RolloutRecord;

fn line(message: &str) -> String {
    let line = RolloutLine {
        timestamp: "2026-12-06T00:00:00.000Z".into(),
        record: RolloutRecord::Event(EventMsg::Warning {
            message: message.into(),
        }),
    };
    serde_json::to_string(&line).unwrap()
}

fn warnings(lines: &[RolloutLine]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|line| match &line.record {
            RolloutRecord::Event(EventMsg::Warning { message }) => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_line_being_written_waits_for_its_end_and_nothing_is_read_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout.jsonl");
    let (first, second, third) = (line("one"), line("two"), line("three"));
    let (head, tail) = third.split_at(10);
    let mut file = std::fs::File::create(&path).unwrap();
    write!(file, "{first}\n{second}\n{head}").unwrap();
    let (lines, offset) = read_from(&path, 0).unwrap();
    assert_eq!(warnings(&lines), ["one", "two"]);
    let (lines, same) = read_from(&path, offset).unwrap();
    assert!(lines.is_empty());
    assert_eq!(same, offset);
    write!(file, "{tail}\nnot a rollout line\n").unwrap();
    let (lines, end) = read_from(&path, offset).unwrap();
    assert_eq!(warnings(&lines), ["three"]);
    assert_eq!(end, std::fs::metadata(&path).unwrap().len());
}

#[test]
fn only_what_a_holder_takes_from_its_inbox_is_forwarded() {
    assert_eq!(
        steering_text(vec![
            UserInput::Text { text: "a".into() },
            UserInput::Text { text: "b".into() }
        ])
        .unwrap(),
        "a\nb"
    );
    let image = UserInput::Image {
        image_url: "data:image/png;base64,AA==".into(),
    };
    assert!(steering_text(vec![image]).is_err());
    let refusal = held_elsewhere(ThreadId::new(), 4_000_000);
    assert!(refusal.contains("pid 4000000"), "{refusal}");
    assert!(refusal.contains("stop that process"), "{refusal}");
}
