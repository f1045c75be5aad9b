use super::*;
use pretty_assertions::assert_eq;
use troupe_messages::threads::ThreadStatus;
use troupe_messages::usage::TokenUsage;

/// Test ids: `a`, `b`, `c` stand for these (they share the prefix `0197`).
const A: &str = "0197a000-0000-7000-8000-000000000001";
const B: &str = "0197b000-0000-7000-8000-000000000002";
const C: &str = "0197c000-0000-7000-8000-000000000003";

fn full(short: &str) -> &'static str {
    match short {
        "a" => A,
        "b" => B,
        _ => C,
    }
}

pub(crate) fn summary(short: &str, updated: i64) -> ThreadSummary {
    let id = full(short);
    ThreadSummary {
        id: id.parse().unwrap(),
        title: format!("title {id}"),
        cwd: "/w".into(),
        parent: None,
        created_at: "2026-01-01T00:00:00.000Z".into(),
        updated_at_ms: updated,
        status: ThreadStatus::Completed,
        rollout_path: format!("/h/sessions/{id}.jsonl").into(),
        archived: false,
        turns: 1,
        tokens: TokenUsage::default(),
        rollout_bytes: 10,
        task_path: None,
        depth: 0,
        nickname: None,
        model_provider: "openai".into(),
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
    let ids: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(ids, [B, A, C]);
    assert_eq!(store.get(C).unwrap(), Some(summary("c", 20)));
    store.remove(A.parse().unwrap()).unwrap();
    let ids: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(ids, [B, C]);
    assert_eq!(store.get(A).unwrap(), None);
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
    let store = reopen(home.path());
    assert_eq!(store.get(A).unwrap(), Some(summary("a", 1)));
}

/// Opens the store a handle of this process just dropped: sled lets go of its file lock when
/// its background flusher, which holds the database too, has stopped, a moment after the
/// last handle is dropped.
fn reopen(home: &Path) -> ThreadStore {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match ThreadStore::open(home) {
            Err(StoreError::Locked { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
}

#[test]
fn a_prefix_finds_its_threads_in_the_index() {
    let home = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(home.path()).unwrap();
    for short in ["a", "b", "c"] {
        store.put(&summary(short, 1)).unwrap();
    }
    let ids = |prefix: &str| -> Vec<String> {
        store
            .with_prefix(prefix)
            .unwrap()
            .into_iter()
            .map(|s| s.id.to_string())
            .collect()
    };
    assert_eq!(ids("0197b"), [B]);
    assert_eq!(ids("0197"), [A, B, C]);
    assert!(ids("0198").is_empty());
    assert_eq!(ids(C), [C]);
}

/// The form `ThreadSummary` had when its ids and paths were `String`s: what indexes written
/// before hold, byte for byte. (Index format 2 added the sub-agent fields; an index of an
/// older format is rebuilt from the rollouts, not read.)
#[derive(serde::Serialize, serde::Deserialize)]
struct StringlySummary {
    id: String,
    title: String,
    cwd: String,
    parent: Option<String>,
    created_at: String,
    updated_at_ms: i64,
    status: ThreadStatus,
    rollout_path: String,
    archived: bool,
    turns: u64,
    tokens: TokenUsage,
    rollout_bytes: u64,
    task_path: Option<String>,
    depth: u32,
    nickname: Option<String>,
    model_provider: String,
}

#[test]
fn entries_written_by_the_string_form_read_back_unchanged() {
    let old = StringlySummary {
        id: B.into(),
        title: "fix the build".into(),
        cwd: "/work/project".into(),
        parent: Some(A.into()),
        created_at: "2026-01-01T00:00:00.000Z".into(),
        updated_at_ms: 1_767_225_600_000,
        status: ThreadStatus::Interrupted,
        rollout_path: "/h/sessions/2026/01/01/rollout-x.jsonl".into(),
        archived: true,
        turns: 3,
        tokens: TokenUsage::default(),
        rollout_bytes: 1234,
        task_path: Some("/root/explore".into()),
        depth: 1,
        nickname: Some("Ada".into()),
        model_provider: "openai".into(),
    };
    let old_bincode = bincode::serialize(&old).unwrap();
    let old_json = serde_json::to_string(&old).unwrap();
    let typed: ThreadSummary = bincode::deserialize(&old_bincode).unwrap();
    assert_eq!(typed.id.to_string(), B);
    assert_eq!(typed.parent.map(|p| p.to_string()).as_deref(), Some(A));
    assert_eq!(typed.cwd, std::path::Path::new("/work/project"));
    // The same bytes both ways, in the index (bincode) and in `list --json`.
    assert_eq!(bincode::serialize(&typed).unwrap(), old_bincode);
    assert_eq!(serde_json::to_string(&typed).unwrap(), old_json);
    assert_eq!(
        serde_json::from_str::<ThreadSummary>(&old_json).unwrap(),
        typed
    );
    // And an index holding the old bytes serves them through the typed API.
    let home = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(home.path()).unwrap();
    store.threads.insert(B.as_bytes(), old_bincode).unwrap();
    assert_eq!(store.get(B).unwrap(), Some(typed));
}
