use super::*;
use pretty_assertions::assert_eq;
use troupe_apply_patch::apply_patch;

#[test]
fn net_diff_over_two_patches_is_git_applicable() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    std::fs::write(dir.join("a.txt"), "one\ntwo\nthree\n").expect("write");
    std::fs::write(dir.join("gone.txt"), "bye\n").expect("write");
    let original = tempfile::tempdir().expect("tempdir");
    for name in ["a.txt", "gone.txt"] {
        std::fs::copy(dir.join(name), original.path().join(name)).expect("copy");
    }
    let mut tracker = TurnDiffTracker::default();
    let first = apply_patch(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** Add File: n.txt\n+new\n*** End Patch",
        dir,
    )
    .expect("first");
    tracker.record(&first);
    let second = apply_patch(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-three\n+3\n*** Delete File: gone.txt\n*** End Patch",
        dir,
    )
    .expect("second");
    tracker.record(&second);
    let diff = tracker.unified_diff(dir).expect("a diff");
    assert!(diff.contains("diff --git a/a.txt b/a.txt\n"), "{diff}");
    assert!(diff.contains("-two\n-three\n+2\n+3\n"), "{diff}");
    assert!(
        diff.contains("new file mode 100644\n--- /dev/null\n+++ b/n.txt\n"),
        "{diff}"
    );
    assert!(
        diff.contains("deleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"),
        "{diff}"
    );

    // The diff turns the original tree into the patched one.
    let mut git = std::process::Command::new("git")
        .args(["apply", "-"])
        .current_dir(original.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git runs");
    use std::io::Write;
    git.stdin
        .take()
        .expect("stdin")
        .write_all(diff.as_bytes())
        .expect("write diff");
    assert!(git.wait().expect("git ends").success());
    for name in ["a.txt", "n.txt"] {
        assert_eq!(
            std::fs::read_to_string(original.path().join(name)).expect("read"),
            std::fs::read_to_string(dir.join(name)).expect("read")
        );
    }
    assert!(!original.path().join("gone.txt").exists());
}

#[test]
fn a_change_undone_within_the_turn_leaves_no_diff() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    std::fs::write(dir.join("a.txt"), "x\n").expect("write");
    let mut tracker = TurnDiffTracker::default();
    for (from, to) in [("x", "y"), ("y", "x")] {
        let patch =
            format!("*** Begin Patch\n*** Update File: a.txt\n@@\n-{from}\n+{to}\n*** End Patch");
        tracker.record(&apply_patch(&patch, dir).expect("applies"));
    }
    assert_eq!(tracker.unified_diff(dir), None);
}
