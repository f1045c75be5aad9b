//! The thread commands end to end with the real binary: exec → list → resume → fork at turn 1
//! → archive → unarchive → delete, with the index and the files checked at each step, and an
//! index rebuilt from the files (`doctor --reindex`) equal to the one the sessions kept.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use troupe_actors::thread_store::{reconcile, ThreadStore};
use troupe_messages::threads::{ThreadStatus, ThreadSummary};
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, stdout, Harness};

fn run(harness: &Harness, args: &[&str]) -> String {
    let output = harness
        .command()
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

fn list(harness: &Harness, args: &[&str]) -> Vec<ThreadSummary> {
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    run(harness, &all)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The index as stored (no reconcile), sorted by id.
fn index(home: &Path) -> Vec<ThreadSummary> {
    // sled releases its file lock from a background thread after the previous handle in this
    // process dropped: retry briefly rather than race it.
    let mut attempts = 0;
    let store = loop {
        match ThreadStore::open(home) {
            Err(troupe_actors::thread_store::StoreError::Locked { .. }) if attempts < 200 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => break other.unwrap(),
        }
    };
    let mut all = store.all().unwrap();
    all.sort_by_key(|a| a.id);
    all
}

/// The summaries read from the files alone, sorted by id.
fn from_files(home: &Path) -> Vec<ThreadSummary> {
    let (mut all, unreadable) = reconcile::scan(home);
    assert!(unreadable.is_empty(), "{unreadable:?}");
    all.sort_by_key(|a| a.id);
    all
}

#[test]
fn exec_list_resume_fork_archive_unarchive_delete_and_reindex() {
    let harness = Harness::new(vec![
        MockResponse::shell("call_1", &["sh", "-c", "echo one"]),
        MockResponse::text("answer one"),
        MockResponse::text("answer two"),
    ]);
    let home = harness.home.path();

    // exec: one thread, indexed by the session itself, equal to what the file says.
    let output = harness.exec(&["--json", "first task"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let id = json_lines(&output)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let kept = index(home);
    assert_eq!(kept, from_files(home));
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].id.to_string(), id);
    assert_eq!(kept[0].title, "first task");
    assert_eq!(kept[0].status, ThreadStatus::Completed);
    assert_eq!(kept[0].turns, 1);
    assert!(kept[0].tokens.total_tokens > 0);

    // list
    let listed = list(&harness, &[]);
    assert_eq!(listed, kept);
    let human = run(&harness, &["list"]);
    assert!(
        human.contains(&id) && human.contains("first task"),
        "{human}"
    );

    // resume: same thread, two turns, still one file.
    let output = harness.exec(&["--json", "resume", &id, "second task"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let kept = index(home);
    assert_eq!(kept, from_files(home));
    assert_eq!((kept.len(), kept[0].turns), (1, 2));
    let source_path = PathBuf::from(&kept[0].rollout_path);

    // fork at turn 1: a new thread with the parent recorded and one turn of history.
    let fork_id = run(&harness, &["fork", &id, "--at-turn", "1"])
        .trim()
        .to_string();
    let kept = index(home);
    assert_eq!(kept, from_files(home));
    let fork = kept.iter().find(|t| t.id.to_string() == fork_id).unwrap();
    assert_eq!(fork.parent.map(|p| p.to_string()), Some(id.clone()));
    assert_eq!(fork.turns, 1);
    assert_eq!(list(&harness, &[]).len(), 2);

    // archive: the file moves, the thread leaves the default list.
    run(&harness, &["archive", &id]);
    assert!(!source_path.exists());
    let archived = home
        .join("archived_sessions")
        .join(source_path.file_name().unwrap());
    assert!(archived.exists());
    assert_eq!(index(home), from_files(home));
    let visible: Vec<String> = list(&harness, &[])
        .into_iter()
        .map(|t| t.id.to_string())
        .collect();
    assert_eq!(visible, vec![fork_id.clone()]);
    let all = list(&harness, &["--all"]);
    assert!(all.iter().any(|t| t.id.to_string() == id && t.archived));

    // unarchive: back where it was.
    run(&harness, &["unarchive", &id]);
    assert!(source_path.exists() && !archived.exists());
    assert_eq!(index(home), from_files(home));
    assert_eq!(list(&harness, &[]).len(), 2);

    // The index rebuilt from the files equals the one kept along the way.
    let before = index(home);
    std::fs::remove_dir_all(home.join("state")).unwrap();
    let report = run(&harness, &["doctor", "--reindex"]);
    assert!(report.contains("2 thread(s)"), "{report}");
    assert_eq!(index(home), before);

    // delete: asks unless --yes; then file and entry are gone.
    let refused = harness
        .command()
        .args(["delete", &id])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("--yes"));
    assert!(source_path.exists());
    run(&harness, &["delete", &id, "--yes"]);
    assert!(!source_path.exists());
    let kept = index(home);
    assert_eq!(kept, from_files(home));
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].id.to_string(), fork_id);

    // Unknown ids are clear errors.
    let unknown = harness.command().args(["archive", &id]).output().unwrap();
    assert!(!unknown.status.success());
    assert!(stderr(&unknown).contains(&format!("no thread {id}")));
}

#[test]
fn list_works_from_the_files_when_the_index_is_held_by_another_process() {
    let harness = Harness::new(vec![MockResponse::text("a")]);
    let output = harness.exec(&["--json", "hello"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let held = ThreadStore::open(harness.home.path()).unwrap();
    let listed = list(&harness, &[]);
    drop(held);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].title, "hello");
}

#[test]
fn a_damaged_index_is_reported_set_aside_and_rebuilt_without_losing_anything() {
    let harness = Harness::new(vec![MockResponse::text("a")]);
    let output = harness.exec(&["--json", "hello"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let home = harness.home.path();
    let state = home.join("state");
    std::fs::remove_dir_all(&state).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("conf"), "this is not sled's config").unwrap();

    // list still answers, from the files, and says how to repair.
    let listed = harness.command().args(["list", "--json"]).output().unwrap();
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(
        stderr(&listed).contains("doctor --reindex"),
        "{}",
        stderr(&listed)
    );
    assert_eq!(stdout(&listed).lines().count(), 1);
    let doctor = harness.command().arg("doctor").output().unwrap();
    assert!(!doctor.status.success());

    run(&harness, &["doctor", "--reindex"]);
    let aside: Vec<PathBuf> = std::fs::read_dir(home)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("state.old-")
        })
        .collect();
    assert_eq!(aside.len(), 1, "the damaged index is kept aside");
    assert_eq!(
        std::fs::read_to_string(aside[0].join("conf")).unwrap(),
        "this is not sled's config"
    );
    assert_eq!(index(home), from_files(home));
    assert_eq!(index(home).len(), 1);
    let doctor = harness.command().arg("doctor").output().unwrap();
    assert!(doctor.status.success(), "{}", stdout(&doctor));
}
