use super::*;

#[test]
fn a_lock_is_exclusive_and_released_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let rollout = dir.path().join("r.jsonl");
    let lock = RolloutLock::acquire(&rollout).unwrap();
    assert_eq!(
        std::fs::read_to_string(lock_path(&rollout)).unwrap(),
        std::process::id().to_string()
    );
    drop(lock);
    assert!(!lock_path(&rollout).exists());
}

#[test]
fn a_live_holder_is_refused_with_its_pid() {
    let dir = tempfile::tempdir().unwrap();
    let rollout = dir.path().join("r.jsonl");
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    std::fs::write(lock_path(&rollout), child.id().to_string()).unwrap();
    let err = RolloutLock::acquire(&rollout).unwrap_err();
    assert!(
        matches!(err, LockError::Held { pid, .. } if pid == child.id()),
        "{err}"
    );
    assert_eq!(holder(&rollout), Some(child.id()));
    child.kill().unwrap();
    child.wait().unwrap();
    // Now the pid is dead: the stale lock is taken over.
    assert_eq!(holder(&rollout), None);
    let lock = RolloutLock::acquire(&rollout).unwrap();
    assert_eq!(
        std::fs::read_to_string(lock_path(&rollout)).unwrap(),
        std::process::id().to_string()
    );
    drop(lock);
}

#[test]
fn a_garbage_lock_file_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let rollout = dir.path().join("r.jsonl");
    std::fs::write(lock_path(&rollout), "not a pid").unwrap();
    assert!(RolloutLock::acquire(&rollout).is_ok());
}
