use super::*;

#[test]
fn the_oldest_lines_go_first() {
    let text = "aaaa\nbb\ncc\n";
    assert_eq!(keep_newest(text, 100), text);
    assert_eq!(keep_newest(text, 6), "bb\ncc\n");
    assert_eq!(keep_newest(text, 3), "cc\n");
    assert_eq!(keep_newest(text, 2), "");
}

#[test]
fn entries_are_codex_lines_and_none_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    record(home.path(), &HistoryToml::default(), "t1", "hello").unwrap();
    let text = std::fs::read_to_string(home.path().join(HISTORY_FILE)).unwrap();
    let entry: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(entry["session_id"], "t1");
    assert_eq!(entry["text"], "hello");
    assert!(entry["ts"].as_u64().unwrap() > 1_600_000_000);

    let other = tempfile::tempdir().unwrap();
    let off = HistoryToml {
        persistence: Some(HistoryPersistence::None),
        max_bytes: None,
    };
    record(other.path(), &off, "t1", "hello").unwrap();
    assert!(!other.path().join(HISTORY_FILE).exists());
}

#[test]
fn the_ui_reads_the_texts_back_unless_persistence_is_none() {
    let home = tempfile::tempdir().unwrap();
    record(home.path(), &HistoryToml::default(), "t1", "first").unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(home.path().join(HISTORY_FILE))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"not json\n"))
        .unwrap();
    record(home.path(), &HistoryToml::default(), "t2", "two\nlines").unwrap();
    assert_eq!(
        load_texts(home.path(), &HistoryToml::default()),
        vec!["first".to_string(), "two\nlines".to_string()]
    );
    let off = HistoryToml {
        persistence: Some(HistoryPersistence::None),
        max_bytes: None,
    };
    assert!(load_texts(home.path(), &off).is_empty());
}
