use super::*;
use crate::session::checkpoints::store_dir;
use crate::thread_store::test_support::write_thread;
use pretty_assertions::assert_eq;
use troupe_checkpoint::Options;

fn options() -> Options {
    Options {
        max_dir_bytes: 1 << 30,
        max_root_bytes: 1 << 30,
        exclude: Vec::new(),
        keep: true,
    }
}

/// Records the tree of `root` as `phase` of `turn` in `thread`'s index.
fn checkpoint(home: &Path, thread: &str, root: &Path, turn: u64, phase: Phase) {
    let store = Store::open(&store_dir(home)).unwrap();
    let manifest = store.take(&[root.to_path_buf()], None, &options()).unwrap();
    store.write_manifest(&manifest).unwrap();
    store
        .append_index(
            thread,
            &IndexLine {
                turn,
                phase,
                checkpoint: Some(manifest.id),
                rollout_backup: None,
                at_ms: 0,
            },
        )
        .unwrap();
}

/// A two-turn thread over `work`: turn 1 writes `a.txt`, turn 2 rewrites it and adds `b.txt`.
fn two_turns() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let work = std::fs::canonicalize(&work).unwrap();
    let (id, _) = write_thread(&home, 2);
    let thread = id.to_string();
    checkpoint(&home, &thread, &work, 1, Phase::Before);
    std::fs::write(work.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    checkpoint(&home, &thread, &work, 1, Phase::After);
    checkpoint(&home, &thread, &work, 2, Phase::Before);
    std::fs::write(work.join("a.txt"), "one\nTWO\nthree\n").unwrap();
    std::fs::write(work.join("b.txt"), "new\n").unwrap();
    checkpoint(&home, &thread, &work, 2, Phase::After);
    (dir, work, thread)
}

fn request(thread: &str, turn: u64) -> RewindRequest {
    RewindRequest {
        thread: thread.to_string(),
        to_turn: Some(turn),
        code: true,
        conversation: true,
        dry_run: false,
        force: false,
        options: options(),
    }
}

#[test]
fn turns_are_listed_newest_first_with_their_prompt_and_files_changed() {
    let (dir, _work, thread) = two_turns();
    let rows = turns(&dir.path().join("home"), None, &thread).unwrap();
    assert_eq!(
        rows,
        vec![
            TurnRow {
                turn: 2,
                prompt: "turn 2".into(),
                files_changed: Some(2),
            },
            TurnRow {
                turn: 1,
                prompt: "turn 1".into(),
                files_changed: Some(1),
            },
        ]
    );
}

#[test]
fn a_turn_without_a_checkpoint_counts_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (id, _) = write_thread(&home, 1);
    let rows = turns(&home, None, &id.to_string()).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].files_changed, None);
}

#[test]
fn the_preview_diffs_each_file_and_writes_nothing() {
    let (dir, work, thread) = two_turns();
    let home = dir.path().join("home");
    let index_before = std::fs::read(
        Store::open(&store_dir(&home))
            .unwrap()
            .thread_index(&thread),
    )
    .unwrap();
    let preview = preview(&home, None, &request(&thread, 2)).unwrap();
    assert!(preview.outcome.dry_run);
    assert!(preview.conflicts.is_empty());
    let by_path: Vec<(PathBuf, ChangeKind)> = preview
        .diffs
        .iter()
        .map(|d| (d.path.clone(), d.kind))
        .collect();
    assert_eq!(
        by_path,
        vec![
            (work.join("a.txt"), ChangeKind::Modified),
            (work.join("b.txt"), ChangeKind::Removed),
        ]
    );
    assert!(
        preview.diffs[0].diff.contains("-TWO\n+two\n"),
        "{}",
        preview.diffs[0].diff
    );
    assert!(
        preview.diffs[1].diff.contains("+++ /dev/null"),
        "{}",
        preview.diffs[1].diff
    );
    assert!(preview.diffs[1].diff.contains("-new\n"));
    assert_eq!(
        preview
            .outcome
            .conversation
            .as_ref()
            .map(|c| (c.turns_before, c.turns_after)),
        Some((2, 1))
    );
    // Nothing written: the tree, the index.
    assert_eq!(
        std::fs::read_to_string(work.join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    assert!(work.join("b.txt").exists());
    let index_after = std::fs::read(
        Store::open(&store_dir(&home))
            .unwrap()
            .thread_index(&thread),
    )
    .unwrap();
    assert_eq!(index_before, index_after);
}

#[test]
fn files_changed_by_someone_else_are_named_not_refused() {
    let (dir, work, thread) = two_turns();
    std::fs::write(work.join("c.txt"), "by hand\n").unwrap();
    let preview = preview(&dir.path().join("home"), None, &request(&thread, 2)).unwrap();
    assert_eq!(preview.conflicts, vec![work.join("c.txt")]);
}

#[test]
fn a_long_diff_is_cut_and_says_how_much_is_left() {
    let old: String = (0..500).map(|n| format!("line {n}\n")).collect();
    let diff = unified("f", &Side::Text(old), &Side::Absent);
    assert_eq!(diff.lines().count(), MAX_DIFF_LINES + 1);
    assert!(diff.ends_with("more lines\n"), "{diff}");
}

#[test]
fn binary_contents_are_described_not_diffed() {
    let diff = unified(
        "f",
        &text_or_binary(vec![0, 1, 2]),
        &Side::Text("text\n".into()),
    );
    assert_eq!(diff, "now: binary, 3 bytes; after: text, 5 bytes\n");
}
