use super::*;
use crate::rollout_recorder::replay::replay;
use crate::thread_store::reconcile::reconcile;
use crate::thread_store::test_support::write_thread;
use pretty_assertions::assert_eq;

#[test]
fn find_by_id_or_unique_prefix_and_clear_errors_otherwise() {
    let home = tempfile::tempdir().unwrap();
    let (id, _) = write_thread(home.path(), 1);
    let id = id.to_string();
    assert_eq!(find(home.path(), None, &id).unwrap().id.to_string(), id);
    assert_eq!(
        find(home.path(), None, &id[..13]).unwrap().id.to_string(),
        id
    );
    let err = find(home.path(), None, "ffffffff").unwrap_err();
    assert!(err.to_string().contains("no thread ffffffff"), "{err}");
    write_thread(home.path(), 1);
    // Both ids are UUIDv7 minted now: they share their first characters.
    let err = find(home.path(), None, &id[..4]).unwrap_err();
    assert!(matches!(err, OpsError::Ambiguous { .. }), "{err}");
}

#[test]
fn fork_copies_history_through_the_turn_and_records_the_parent() {
    let home = tempfile::tempdir().unwrap();
    let (id, path) = write_thread(home.path(), 3);
    let store = ThreadStore::open(home.path()).unwrap();
    let fork1 = fork(home.path(), Some(&store), &id.to_string(), Some(1)).unwrap();
    assert_eq!(fork1.parent, Some(id));
    assert_eq!(fork1.turns, 1);
    let source = loader::load(&path).unwrap();
    let forked = loader::load(&fork1.rollout_path).unwrap();
    assert_eq!(forked.meta.forked_at_turn, Some(TurnId(1)));
    assert_eq!(forked.lines, source.lines[..5].to_vec());
    assert_eq!(replay(&forked.lines).history.len(), 2);
    // In the index at once.
    assert_eq!(store.get(&fork1.id.to_string()).unwrap(), Some(fork1));
    let err = fork(home.path(), Some(&store), &id.to_string(), Some(4)).unwrap_err();
    assert!(err.to_string().contains("between 1 and 3"), "{err}");
    let all = fork(home.path(), Some(&store), &id.to_string(), None).unwrap();
    assert_eq!(all.turns, 3);
}

#[test]
fn archive_unarchive_delete_move_files_and_keep_the_index_in_step() {
    let home = tempfile::tempdir().unwrap();
    let (id, path) = write_thread(home.path(), 1);
    let id = id.to_string();
    let store = ThreadStore::open(home.path()).unwrap();
    reconcile(&store, home.path()).unwrap();

    let archived = archive(home.path(), Some(&store), &id).unwrap();
    assert!(archived.archived);
    assert!(!path.exists());
    assert!(Path::new(&archived.rollout_path).starts_with(home.path().join("archived_sessions")));
    assert_eq!(store.get(&id).unwrap(), Some(archived));
    assert!(matches!(
        archive(home.path(), Some(&store), &id),
        Err(OpsError::AlreadyArchived(_))
    ));

    let back = unarchive(home.path(), Some(&store), &id).unwrap();
    assert!(!back.archived);
    assert_eq!(Path::new(&back.rollout_path), path);
    assert!(matches!(
        unarchive(home.path(), Some(&store), &id),
        Err(OpsError::NotArchived(_))
    ));

    delete(home.path(), Some(&store), &id).unwrap();
    assert!(!path.exists());
    assert_eq!(store.get(&id).unwrap(), None);
}

#[test]
fn a_thread_held_by_a_live_process_is_not_archived_or_deleted() {
    let home = tempfile::tempdir().unwrap();
    let (id, path) = write_thread(home.path(), 1);
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    std::fs::write(lock::lock_path(&path), child.id().to_string()).unwrap();
    let archived = archive(home.path(), None, &id.to_string());
    let deleted = delete(home.path(), None, &id.to_string());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        matches!(archived, Err(OpsError::InUse { .. })),
        "{archived:?}"
    );
    assert!(
        matches!(deleted, Err(OpsError::InUse { .. })),
        "{deleted:?}"
    );
    assert!(path.exists());
}

#[test]
fn a_prefix_is_looked_up_in_the_index_not_by_walking_the_files() {
    let home = tempfile::tempdir().unwrap();
    let (id, path) = write_thread(home.path(), 1);
    let store = ThreadStore::open(home.path()).unwrap();
    // The rollout sits where the file walk never looks; only the index knows it.
    let elsewhere = home.path().join("elsewhere.jsonl");
    std::fs::rename(&path, &elsewhere).unwrap();
    store
        .put(&super::summarize_file(home.path(), &elsewhere).unwrap())
        .unwrap();
    let prefix = &id.to_string()[..13];
    let found = find(home.path(), Some(&store), prefix).unwrap();
    assert_eq!((found.id, found.rollout_path), (id, elsewhere));
    let err = find(home.path(), None, prefix).unwrap_err();
    assert!(matches!(err, OpsError::Unknown(_)), "{err}");
}
