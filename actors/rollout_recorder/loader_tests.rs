use super::*;
use pretty_assertions::assert_eq;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::items::ResponseItem;

fn meta_line(version: u32) -> String {
    format!(
        r#"{{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{{"version":{version},"thread_id":"{}","cwd":"/w","model":"m","model_provider":"p","cli_version":"0.1.0","created_at":"2026-01-01T00:00:00.000Z"}}}}"#,
        ThreadId::new()
    )
}

fn item_line(text: &str) -> String {
    let line = RolloutLine {
        timestamp: "2026-01-01T00:00:01.000Z".into(),
        record: RolloutRecord::ResponseItem(ResponseItem::user_text(text)),
    };
    serde_json::to_string(&line).unwrap()
}

fn texts(rollout: &LoadedRollout) -> Vec<RolloutRecord> {
    rollout.lines.iter().map(|l| l.record.clone()).collect()
}

#[test]
fn reads_every_line_in_order_and_a_version_1_meta_without_later_fields() {
    let data = format!("{}\n{}\n{}\n", meta_line(1), item_line("a"), item_line("b"));
    let rollout = parse(Path::new("r.jsonl"), data.as_bytes()).unwrap();
    assert_eq!(rollout.meta.version, 1);
    assert_eq!(rollout.meta.git, None);
    assert_eq!(rollout.meta.parent_thread_id, None);
    assert_eq!(
        texts(&rollout),
        vec![
            RolloutRecord::ResponseItem(ResponseItem::user_text("a")),
            RolloutRecord::ResponseItem(ResponseItem::user_text("b")),
        ]
    );
    assert!(rollout.warnings.is_empty());
    assert!(check_writable(&rollout).is_ok());
}

#[test]
fn a_partial_last_line_is_skipped_with_a_warning_and_nothing_before_is_lost() {
    let full = item_line("b");
    let data = format!(
        "{}\n{}\n{}",
        meta_line(1),
        item_line("a"),
        &full[..full.len() / 2]
    );
    let rollout = parse(Path::new("r.jsonl"), data.as_bytes()).unwrap();
    assert_eq!(rollout.lines.len(), 1);
    assert_eq!(rollout.warnings.len(), 1);
    assert!(
        rollout.warnings[0].contains("line 3 is incomplete"),
        "{:?}",
        rollout.warnings
    );
}

#[test]
fn a_torn_line_closed_by_a_later_resume_is_skipped_too() {
    let full = item_line("b");
    let data = format!(
        "{}\n{}\n{}\n{}\n",
        meta_line(1),
        item_line("a"),
        &full[..10],
        item_line("c")
    );
    let rollout = parse(Path::new("r.jsonl"), data.as_bytes()).unwrap();
    assert_eq!(rollout.lines.len(), 2);
    assert_eq!(rollout.warnings.len(), 1);
}

#[test]
fn unknown_line_types_and_unknown_events_from_newer_builds_are_skipped() {
    let data = format!(
        "{}\n{}\n{}\n{}\n",
        meta_line(1),
        r#"{"timestamp":"t","type":"hologram","payload":{}}"#,
        r#"{"timestamp":"t","type":"event","payload":{"type":"teleported","to":"mars"}}"#,
        item_line("a")
    );
    let rollout = parse(Path::new("r.jsonl"), data.as_bytes()).unwrap();
    assert_eq!(rollout.lines.len(), 1);
    assert_eq!(rollout.warnings.len(), 2, "{:?}", rollout.warnings);
    assert!(rollout.warnings[0].contains("`hologram`"));
    assert!(rollout.warnings[1].contains("event/teleported"));
}

#[test]
fn a_damaged_history_line_is_an_error_naming_file_and_line() {
    let data = format!(
        "{}\n{}\n",
        meta_line(1),
        r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"wizard"}}"#
    );
    let err = parse(Path::new("/x/r.jsonl"), data.as_bytes()).unwrap_err();
    assert!(
        matches!(err, RolloutError::Corrupt { line: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("/x/r.jsonl line 2"), "{err}");
}

#[test]
fn files_without_a_session_meta_are_not_rollouts() {
    for data in [
        "".to_string(),
        format!("{}\n", item_line("a")),
        "garbage\n".into(),
    ] {
        let err = parse(Path::new("r.jsonl"), data.as_bytes()).unwrap_err();
        assert!(matches!(err, RolloutError::NotARollout { .. }), "{err}");
    }
}

#[test]
fn a_newer_format_loads_but_is_not_writable() {
    let event = RolloutLine {
        timestamp: "t".into(),
        record: RolloutRecord::Event(EventMsg::TurnStarted { turn_id: TurnId(1) }),
    };
    let data = format!(
        "{}\n{}\n",
        meta_line(ROLLOUT_FORMAT_VERSION + 1),
        serde_json::to_string(&event).unwrap()
    );
    let rollout = parse(Path::new("r.jsonl"), data.as_bytes()).unwrap();
    let err = check_writable(&rollout).unwrap_err();
    assert!(err.to_string().contains("newer troupe"), "{err}");
}

#[test]
fn a_missing_file_is_an_io_error_with_its_path() {
    let err = load(Path::new("/nonexistent/r.jsonl")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/r.jsonl"), "{err}");
}

#[test]
fn known_line_types_are_the_serde_names_of_the_record_variants() {
    assert_eq!(
        troupe_messages::rollout::record_types(),
        [
            "session_meta",
            "response_item",
            "turn_context",
            "event",
            "compacted"
        ]
    );
}

#[test]
fn a_garbage_middle_line_is_damage_that_resume_skips() {
    let data = format!(
        "{}\n{}\nthis is not json\n{}\n",
        meta_line(1),
        item_line("a"),
        item_line("c")
    );
    let rollout = parse(Path::new("r.jsonl"), data.as_bytes()).unwrap();
    assert_eq!(rollout.lines.len(), 2);
    assert_eq!(rollout.damaged.len(), 1, "{:?}", rollout.warnings);
    assert!(
        rollout.damaged[0].contains("line 3 is damaged"),
        "{:?}",
        rollout.damaged
    );
    assert!(
        rollout.damaged[0].contains("skips that line"),
        "{:?}",
        rollout.damaged
    );
    assert_eq!(rollout.warnings, rollout.damaged);
    // A cut-short object is still a crash's trace, not damage.
    let full = item_line("b");
    let torn = format!("{}\n{}\n{}\n", meta_line(1), &full[..10], item_line("c"));
    let rollout = parse(Path::new("r.jsonl"), torn.as_bytes()).unwrap();
    assert!(rollout.damaged.is_empty(), "{:?}", rollout.damaged);
    assert_eq!(rollout.warnings.len(), 1);
}

#[test]
fn read_meta_reads_the_first_line_only_and_refuses_what_is_not_a_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    // A damaged later line does not matter: only the meta is read.
    std::fs::write(&path, format!("\n{}\ngarbage\n", meta_line(2))).unwrap();
    assert_eq!(read_meta(&path).unwrap().version, 2);
    for data in [
        "".to_string(),
        format!("{}\n", item_line("a")),
        "garbage\n".into(),
    ] {
        std::fs::write(&path, data).unwrap();
        let err = read_meta(&path).unwrap_err();
        assert!(matches!(err, RolloutError::NotARollout { .. }), "{err}");
    }
}
