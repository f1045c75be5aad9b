//! The tracker against the full walk in the cases the random round trip does not reach:
//! ignore rules changing, a file changed through a link outside the root, a directory
//! replaced or moved, and the written deltas surviving the pruning of their base.

use super::roundtrip_tests::options;
use super::{prune, Manifest, Node, PruneLimits, StatKey, Store, Tracker};
use std::path::{Path, PathBuf};

fn setup() -> (tempfile::TempDir, PathBuf, Store, Tracker) {
    let work = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(work.path()).unwrap().join("tree");
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/a.rs"), "a").unwrap();
    std::fs::write(root.join("src/deep/b.rs"), "b").unwrap();
    std::fs::write(root.join("notes.log"), "log").unwrap();
    let store = Store::open(&work.path().join("store")).unwrap();
    (work, root, store, Tracker::new(options(), true))
}

/// What a manifest records of its first root, the stat cache aside.
fn shape(manifest: &Manifest) -> Vec<(String, Node)> {
    without_stat(&manifest.roots[0])
}

/// A root's entries with their stat keys cleared.
pub(super) fn without_stat(root: &super::RootState) -> Vec<(String, Node)> {
    root.entries
        .iter()
        .map(|(path, node)| {
            let mut node = node.clone();
            if let Node::File { stat, .. } = &mut node {
                *stat = StatKey::default();
            }
            (path.clone(), node)
        })
        .collect()
}

/// A checkpoint through the tracker, checked against a full walk.
fn take(tracker: &mut Tracker, store: &Store, root: &Path) -> Manifest {
    let roots = vec![root.to_path_buf()];
    let quick = tracker.take(store, &roots, None).unwrap();
    let walked = store.take(&roots, None, &options()).unwrap();
    assert_eq!(shape(&quick), shape(&walked));
    quick
}

fn paths(manifest: &Manifest) -> Vec<String> {
    manifest.roots[0].entries.keys().cloned().collect()
}

#[test]
fn an_unchanged_tree_reads_nothing_and_a_changed_file_is_read_alone() {
    let (_work, root, store, mut tracker) = setup();
    assert!(tracker.watching());
    take(&mut tracker, &store, &root);
    let roots = vec![root.clone()];
    assert_eq!(tracker.take(&store, &roots, None).unwrap().files_read, 0);
    std::fs::write(root.join("src/deep/b.rs"), "b2").unwrap();
    assert_eq!(tracker.take(&store, &roots, None).unwrap().files_read, 1);
    take(&mut tracker, &store, &root);
}

#[test]
fn a_changed_gitignore_changes_what_is_covered() {
    let (_work, root, store, mut tracker) = setup();
    assert!(paths(&take(&mut tracker, &store, &root)).contains(&"notes.log".to_string()));
    std::fs::write(root.join(".gitignore"), "*.log\ndeep/\n").unwrap();
    let now = paths(&take(&mut tracker, &store, &root));
    assert!(!now.contains(&"notes.log".to_string()));
    assert!(!now.contains(&"src/deep/b.rs".to_string()));
    std::fs::remove_file(root.join(".gitignore")).unwrap();
    assert!(paths(&take(&mut tracker, &store, &root)).contains(&"src/deep/b.rs".to_string()));
}

#[test]
fn a_file_changed_through_a_link_outside_the_root_is_seen() {
    let (work, root, store, mut tracker) = setup();
    let outside = work.path().join("outside.rs");
    std::fs::hard_link(root.join("src/a.rs"), &outside).unwrap();
    let before = take(&mut tracker, &store, &root);
    std::fs::write(&outside, "changed from elsewhere").unwrap();
    let after = take(&mut tracker, &store, &root);
    assert_ne!(shape(&before), shape(&after));
}

#[test]
fn a_directory_replaced_or_moved_is_walked_again() {
    let (_work, root, store, mut tracker) = setup();
    take(&mut tracker, &store, &root);
    // Replaced under the same name, while something keeps the old one open.
    let held = std::fs::File::open(root.join("src/deep")).unwrap();
    std::fs::remove_dir_all(root.join("src/deep")).unwrap();
    std::fs::create_dir(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/deep/c.rs"), "c").unwrap();
    take(&mut tracker, &store, &root);
    drop(held);
    // Moved, then changed at its new place.
    std::fs::rename(root.join("src/deep"), root.join("moved")).unwrap();
    take(&mut tracker, &store, &root);
    std::fs::write(root.join("moved/c.rs"), "c2").unwrap();
    std::fs::create_dir(root.join("moved/new")).unwrap();
    std::fs::write(root.join("moved/new/d.rs"), "d").unwrap();
    let now = take(&mut tracker, &store, &root);
    assert!(paths(&now).contains(&"moved/new/d.rs".to_string()));
    // Moved back and a directory of the same name made where it was.
    std::fs::rename(root.join("moved"), root.join("src/deep")).unwrap();
    std::fs::create_dir(root.join("moved")).unwrap();
    take(&mut tracker, &store, &root);
}

#[test]
fn deltas_load_back_and_survive_the_pruning_of_their_base() {
    let (_work, root, store, mut tracker) = setup();
    let roots = vec![root.clone()];
    for i in 0..40 {
        std::fs::write(root.join(format!("src/f{i}.rs")), "x").unwrap();
    }
    let mut first = tracker.take(&store, &roots, None).unwrap();
    store.write_manifest_over(&mut first, None).unwrap();
    let mut chain = vec![first];
    for i in 0..3 {
        std::fs::write(root.join("src/a.rs"), format!("a{i}")).unwrap();
        let mut next = tracker.take(&store, &roots, None).unwrap();
        store.write_manifest_over(&mut next, chain.last()).unwrap();
        assert!(next.written.base.is_some(), "written as a delta");
        assert!(store.load_manifest(&next.id).unwrap().same_trees(&next));
        chain.push(next);
    }
    // The newest two stay (protected); pruned by size, the two oldest go, each after
    // the delta written on it is written whole.
    for (turn, manifest) in chain.iter().enumerate() {
        let line = crate::index::IndexLine {
            turn: turn as u64,
            phase: crate::index::Phase::Before,
            checkpoint: Some(manifest.id.clone()),
            rollout_backup: None,
            at_ms: 0,
        };
        store.append_index("t", &line).unwrap();
    }
    let limits = PruneLimits {
        max_age_days: 30,
        max_total_bytes: 0,
    };
    assert_eq!(prune(&store, limits).unwrap().manifests_removed, 2);
    assert!(store.load_manifest(&chain[0].id).is_err());
    for kept in &chain[2..] {
        assert!(store.load_manifest(&kept.id).unwrap().same_trees(kept));
    }
}

#[test]
fn a_directory_made_unreadable_is_left_out_as_the_walk_leaves_it_out() {
    use std::os::unix::fs::PermissionsExt;
    let (_work, root, store, mut tracker) = setup();
    take(&mut tracker, &store, &root);
    let deep = root.join("src/deep");
    std::fs::set_permissions(&deep, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable = std::fs::read_dir(&deep).is_ok();
    let roots = vec![root.clone()];
    let quick = tracker.take(&store, &roots, None);
    std::fs::set_permissions(&deep, std::fs::Permissions::from_mode(0o755)).unwrap();
    let quick = quick.unwrap();
    if !readable {
        // Not as root: the walk cannot list it, so neither may the tracker keep its files.
        assert!(!paths(&quick).contains(&"src/deep/b.rs".to_string()));
    }
    take(&mut tracker, &store, &root);
}
