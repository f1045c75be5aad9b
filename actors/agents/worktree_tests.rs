use super::worktree::*;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo() -> (tempfile::TempDir, tempfile::TempDir) {
    let (repo, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    git(repo.path(), &["init", "-q"]);
    std::fs::create_dir(repo.path().join("sub")).unwrap();
    std::fs::write(repo.path().join("sub/a.txt"), "a\n").unwrap();
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "one"]);
    (repo, home)
}

#[test]
fn a_worktree_is_committed_kept_while_unmerged_and_removed_once_merged() {
    let (repo, home) = repo();
    let wt = create(&repo.path().join("sub"), home.path(), Some("writer")).unwrap();
    assert!(wt.branch.starts_with("troupe/writer-"), "{}", wt.branch);
    assert!(wt.root.starts_with(home.path().join("worktrees")));
    assert_eq!(wt.cwd, wt.root.join("sub"));
    assert_eq!(diffstat(&wt).unwrap(), "no changes");
    assert!(!commit_all(&wt, "nothing").unwrap());

    std::fs::write(wt.cwd.join("b.txt"), "b\n").unwrap();
    assert!(commit_all(&wt, "troupe: /root/writer").unwrap());
    assert!(diffstat(&wt).unwrap().contains("sub/b.txt | 1 +"));
    assert_eq!(
        retire(&wt, "closed").unwrap(),
        Retired::Kept { unmerged: 1 }
    );
    assert!(wt.root.is_dir());

    git(repo.path(), &["merge", "-q", "--ff-only", &wt.branch]);
    assert_eq!(retire(&wt, "closed").unwrap(), Retired::Removed);
    assert!(!wt.root.exists());
    assert!(git(repo.path(), &["branch", "--list", "troupe/*"])
        .trim()
        .is_empty());
}

#[test]
fn uncommitted_work_is_committed_when_retired_so_nothing_is_lost() {
    let (repo, home) = repo();
    let wt = create(repo.path(), home.path(), Some("w")).unwrap();
    std::fs::write(wt.root.join("late.txt"), "late\n").unwrap();
    assert_eq!(
        retire(&wt, "closed").unwrap(),
        Retired::Kept { unmerged: 1 }
    );
    assert!(git(repo.path(), &["show", "--stat", &wt.branch]).contains("late.txt"));
}

#[test]
fn outside_a_repository_or_before_a_commit_is_an_error() {
    let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let err = create(dir.path(), home.path(), None).unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepository { .. }), "{err}");
    assert!(err.to_string().contains("is not inside a Git repository"));
    git(dir.path(), &["init", "-q"]);
    let err = create(dir.path(), home.path(), None).unwrap_err();
    assert!(
        err.to_string().contains("has no commit to check out yet"),
        "{err}"
    );
}
