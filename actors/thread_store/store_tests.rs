use super::*;
use pretty_assertions::assert_eq;
use troupe_messages::threads::ThreadStatus;
use troupe_messages::usage::TokenUsage;

pub(crate) fn summary(id: &str, updated: i64) -> ThreadSummary {
    ThreadSummary {
        id: id.into(),
        title: format!("title {id}"),
        cwd: "/w".into(),
        parent: None,
        created_at: "2026-01-01T00:00:00.000Z".into(),
        updated_at_ms: updated,
        status: ThreadStatus::Completed,
        rollout_path: format!("/h/sessions/{id}.jsonl"),
        archived: false,
        turns: 1,
        tokens: TokenUsage::default(),
        rollout_bytes: 10,
        task_path: None,
        depth: 0,
        nickname: None,
    }
}

#[test]
fn put_get_list_by_update_time_and_remove() {
    let home = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(home.path()).unwrap();
    store.put(&summary("a", 30)).unwrap();
    store.put(&summary("b", 10)).unwrap();
    store.put(&summary("c", 20)).unwrap();
    // Updating moves it in the time order (and leaves no stale key behind).
    store.put(&summary("b", 40)).unwrap();
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["b", "a", "c"]);
    assert_eq!(store.get("c").unwrap(), Some(summary("c", 20)));
    store.remove("a").unwrap();
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["b", "c"]);
    assert_eq!(store.get("a").unwrap(), None);
}

#[test]
fn a_second_open_in_use_is_reported_as_locked() {
    let home = tempfile::tempdir().unwrap();
    let _store = ThreadStore::open(home.path()).unwrap();
    let err = ThreadStore::open(home.path()).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("another troupe process"), "{err}");
}

#[test]
fn a_damaged_store_says_how_to_recover() {
    let home = tempfile::tempdir().unwrap();
    let state = state_dir(home.path());
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("conf"), "this is not sled's config").unwrap();
    let err = ThreadStore::open(home.path()).unwrap_err();
    assert!(err.to_string().contains("doctor --reindex"), "{err}");
    // Nothing was deleted.
    assert!(state.join("conf").exists());
}

#[test]
fn entries_survive_reopening() {
    let home = tempfile::tempdir().unwrap();
    {
        let store = ThreadStore::open(home.path()).unwrap();
        store.put(&summary("a", 1)).unwrap();
        store.flush().unwrap();
    }
    let store = ThreadStore::open(home.path()).unwrap();
    assert_eq!(store.get("a").unwrap(), Some(summary("a", 1)));
}
