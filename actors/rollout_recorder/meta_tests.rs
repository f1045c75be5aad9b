use super::*;
use pretty_assertions::assert_eq;

#[test]
fn reads_branch_and_commit_from_a_loose_ref() {
    let dir = tempfile::tempdir().unwrap();
    let git = dir.path().join(".git");
    std::fs::create_dir_all(git.join("refs/heads")).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(git.join("refs/heads/main"), "abc123\n").unwrap();
    let sub = dir.path().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    assert_eq!(
        git_info(&sub),
        Some(GitInfo {
            branch: Some("main".into()),
            commit: Some("abc123".into())
        })
    );
}

#[test]
fn reads_packed_refs_detached_heads_and_worktree_files() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main");
    let git = main.join(".git");
    std::fs::create_dir_all(git.join("worktrees/wt")).unwrap();
    std::fs::write(git.join("HEAD"), "0123abcd\n").unwrap();
    std::fs::write(
        git.join("packed-refs"),
        "# pack\nfeedbeef refs/heads/topic\n",
    )
    .unwrap();
    assert_eq!(
        git_info(&main),
        Some(GitInfo {
            branch: None,
            commit: Some("0123abcd".into())
        })
    );
    let wt_git = git.join("worktrees/wt");
    std::fs::write(wt_git.join("HEAD"), "ref: refs/heads/topic\n").unwrap();
    std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
    let wt = dir.path().join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
    assert_eq!(
        git_info(&wt),
        Some(GitInfo {
            branch: Some("topic".into()),
            commit: Some("feedbeef".into())
        })
    );
}

#[test]
fn no_repository_no_git_info() {
    let dir = tempfile::tempdir().unwrap();
    // tempdirs live under /tmp, outside any repository.
    assert_eq!(git_info(dir.path()), None);
}

#[test]
fn digest_is_sha256_hex() {
    assert_eq!(
        digest("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
