use super::{diff, prune, ChangeKind, Options, PruneLimits, Store};
use std::os::unix::fs::symlink;
use std::path::PathBuf;

fn options(max_dir_bytes: u64) -> Options {
    Options {
        max_dir_bytes,
        max_root_bytes: u64::MAX,
        exclude: Vec::new(),
        keep: true,
    }
}

fn setup() -> (tempfile::TempDir, PathBuf, Store) {
    let work = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(work.path()).unwrap().join("tree");
    std::fs::create_dir(&root).unwrap();
    let store = Store::open(&work.path().join("store")).unwrap();
    (work, root, store)
}

#[test]
fn an_unchanged_file_is_not_read_again_once_its_times_are_past_the_racy_window() {
    let (_work, root, store) = setup();
    for i in 0..20 {
        std::fs::write(root.join(format!("f{i}")), format!("{i}")).unwrap();
    }
    let roots = vec![root.clone()];
    let first = store.take(&roots, None, &options(u64::MAX)).unwrap();
    assert_eq!(first.files_read, 20);
    // Written just now: the times cannot vouch yet, so they are read again.
    let racy = store
        .take(&roots, Some(&first), &options(u64::MAX))
        .unwrap();
    assert_eq!(racy.files_read, 20);
    std::thread::sleep(std::time::Duration::from_millis(150));
    let settled = store.take(&roots, Some(&racy), &options(u64::MAX)).unwrap();
    let again = store
        .take(&roots, Some(&settled), &options(u64::MAX))
        .unwrap();
    assert_eq!(again.files_read, 0);
    std::fs::write(root.join("f3"), "changed").unwrap();
    let changed = store
        .take(&roots, Some(&settled), &options(u64::MAX))
        .unwrap();
    assert_eq!(changed.files_read, 1);
    let changes = diff(&settled, &changed);
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].path.as_str(), changes[0].kind),
        ("f3", ChangeKind::Modified)
    );
}

#[test]
fn a_directory_over_the_limit_is_left_out_and_left_alone() {
    let (_work, root, store) = setup();
    std::fs::create_dir_all(root.join("big/inner")).unwrap();
    std::fs::write(root.join("big/inner/blob"), vec![7u8; 4096]).unwrap();
    std::fs::write(root.join("small"), "x").unwrap();
    let roots = vec![root.clone()];
    let before = store.take(&roots, None, &options(1024)).unwrap();
    let skipped: Vec<&str> = before.roots[0]
        .skipped
        .iter()
        .map(|s| s.path.as_str())
        .collect();
    assert_eq!(skipped, vec!["big/inner"]);
    std::fs::remove_file(root.join("small")).unwrap();
    std::fs::write(root.join("big/inner/blob"), "changed").unwrap();
    let now = store.take(&roots, Some(&before), &options(1024)).unwrap();
    let report = store.restore(&now, &before).unwrap();
    assert_eq!(std::fs::read(root.join("small")).unwrap(), b"x");
    assert_eq!(
        std::fs::read(root.join("big/inner/blob")).unwrap(),
        b"changed"
    );
    assert!(report
        .not_covered
        .iter()
        .any(|(_, s)| s.path == "big/inner"));
}

#[test]
fn a_restore_never_writes_through_a_symlink_planted_in_the_root() {
    let (work, root, store) = setup();
    let outside = work.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/file"), "mine").unwrap();
    let roots = vec![root.clone()];
    let before = store.take(&roots, None, &options(u64::MAX)).unwrap();
    store.write_manifest(&before).unwrap();
    // The directory is replaced by a link out of the root after the current state is read.
    std::fs::remove_dir_all(root.join("sub")).unwrap();
    let now = store
        .take(&roots, Some(&before), &options(u64::MAX))
        .unwrap();
    symlink(&outside, root.join("sub")).unwrap();
    let report = store.restore(&now, &before).unwrap();
    assert!(!outside.join("file").exists(), "written outside the root");
    assert!(!report.failed.is_empty());
}

#[test]
fn the_store_itself_is_never_walked() {
    let work = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(work.path()).unwrap();
    let store = Store::open(&root.join("checkpoints")).unwrap();
    std::fs::write(root.join("a"), "a").unwrap();
    let manifest = store
        .take(std::slice::from_ref(&root), None, &options(u64::MAX))
        .unwrap();
    let paths: Vec<&String> = manifest.roots[0].entries.keys().collect();
    assert_eq!(paths, vec!["a"]);
}

#[test]
fn pruning_keeps_each_threads_newest_checkpoints_and_drops_unnamed_objects_after_grace() {
    let (_work, root, store) = setup();
    let roots = vec![root.clone()];
    let mut ids = Vec::new();
    for i in 0..4 {
        std::fs::write(root.join("f"), format!("version {i}")).unwrap();
        let manifest = store.take(&roots, None, &options(u64::MAX)).unwrap();
        store.write_manifest(&manifest).unwrap();
        let line = crate::index::IndexLine {
            turn: i,
            phase: crate::index::Phase::Before,
            checkpoint: Some(manifest.id.clone()),
            rollout_backup: None,
            at_ms: 0,
        };
        store.append_index("t", &line).unwrap();
        ids.push(manifest.id);
    }
    let report = prune(
        &store,
        PruneLimits {
            max_age_days: 30,
            max_total_bytes: 0,
        },
    )
    .unwrap();
    assert_eq!(report.manifests_removed, 2);
    assert!(store.load_manifest(&ids[0]).is_err());
    assert!(store.load_manifest(&ids[3]).is_ok());
    assert!(store.load_manifest(&ids[2]).is_ok());
}

#[test]
fn a_root_over_the_store_limit_is_left_out_whole_and_a_restore_deletes_nothing() {
    let (_work, root, store) = setup();
    std::fs::write(root.join("big"), vec![1u8; 4096]).unwrap();
    let roots = vec![root.clone()];
    let full = store.take(&roots, None, &options(u64::MAX)).unwrap();
    let capped = Options {
        max_root_bytes: 1024,
        ..options(u64::MAX)
    };
    let over = store.take(&roots, Some(&full), &capped).unwrap();
    assert!(over.roots[0].entries.is_empty());
    assert!(diff(&full, &over).is_empty());
    let report = store.restore(&full, &over).unwrap();
    assert!(report.changed.is_empty());
    assert!(root.join("big").exists());
}

#[test]
fn a_torn_index_line_is_skipped_and_the_next_append_stays_whole() {
    use crate::index::{latest, IndexLine, Phase};
    let (_work, _root, store) = setup();
    let line = |turn, id: &str| IndexLine {
        turn,
        phase: Phase::Before,
        checkpoint: Some(id.to_string()),
        rollout_backup: None,
        at_ms: 0,
    };
    store.append_index("t", &line(1, "a")).unwrap();
    // A crash cut the next line short.
    let path = store.thread_index("t");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"turn\":2,\"pha");
    std::fs::write(&path, bytes).unwrap();
    store.append_index("t", &line(3, "c")).unwrap();
    let lines = store.read_index("t").unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(latest(&lines).unwrap().checkpoint.as_deref(), Some("c"));
}
