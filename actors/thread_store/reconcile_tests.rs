use super::*;
use crate::thread_store::test_support::write_thread;
use pretty_assertions::assert_eq;

#[test]
fn builds_the_index_from_files_then_only_rereads_what_changed() {
    let home = tempfile::tempdir().unwrap();
    let (a, a_path) = write_thread(home.path(), 2);
    let (b, _) = write_thread(home.path(), 1);
    let store = ThreadStore::open(home.path()).unwrap();
    let report = reconcile(&store, home.path()).unwrap();
    assert_eq!((report.files, report.refreshed, report.removed), (2, 2, 0));
    let entry = store.get(&a.to_string()).unwrap().unwrap();
    assert_eq!(entry.turns, 2);
    assert_eq!(entry.title, "turn 1");
    assert_eq!(entry.status, ThreadStatus::Completed);
    assert_eq!(
        entry.updated_at_ms,
        summary_time("2026-01-01T00:00:02.000Z")
    );

    let report = reconcile(&store, home.path()).unwrap();
    assert_eq!((report.files, report.refreshed, report.removed), (2, 0, 0));

    // A file that grew is read again; a file that vanished is dropped from the index.
    let mut text = std::fs::read_to_string(&a_path).unwrap();
    text.push_str(
        r#"{"timestamp":"2026-01-01T00:00:09.000Z","type":"event","payload":{"type":"turn_started","turn_id":3}}"#,
    );
    text.push('\n');
    std::fs::write(&a_path, text).unwrap();
    std::fs::remove_file(store.get(&b.to_string()).unwrap().unwrap().rollout_path).unwrap();
    let report = reconcile(&store, home.path()).unwrap();
    assert_eq!((report.files, report.refreshed, report.removed), (1, 1, 1));
    assert_eq!(
        store.get(&a.to_string()).unwrap().unwrap().status,
        ThreadStatus::Incomplete
    );
    assert_eq!(store.get(&b.to_string()).unwrap(), None);
}

#[test]
fn unreadable_files_are_reported_and_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("sessions/2026/01/01");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("rollout-2026-01-01T00-00-00-x.jsonl");
    std::fs::write(&bad, "not json\n").unwrap();
    let store = ThreadStore::open(home.path()).unwrap();
    let report = reconcile(&store, home.path()).unwrap();
    assert_eq!(report.unreadable.len(), 1);
    assert!(report.unreadable[0].contains("not a troupe rollout"));
    assert!(bad.exists());
}

fn summary_time(t: &str) -> i64 {
    crate::thread_store::summary::time_ms(t)
}
