use super::*;
use pretty_assertions::assert_eq;

fn settings() -> SandboxSettings {
    SandboxSettings {
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: true,
        ..SandboxSettings::default()
    }
}

#[test]
fn workspace_write_protects_git_and_adds_roots() {
    let dir = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let mut s = settings();
    s.writable_roots = vec![extra.path().to_path_buf()];
    s.network_access = true;
    s.deny_read = vec![PathBuf::from("/nonexistent-secret")];
    let profile = resolve_profile(SandboxMode::WorkspaceWrite, &s, dir.path()).unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let PermissionProfile::Managed {
        file_system,
        network,
    } = profile
    else {
        panic!("managed expected");
    };
    assert_eq!(network, NetworkPolicy::Enabled);
    assert_eq!(file_system.kind, FileSystemSandboxKind::Restricted);
    assert_eq!(file_system.writable_roots[0].root, cwd);
    assert_eq!(
        file_system.writable_roots[0].read_only_subpaths,
        vec![cwd.join(".git"), cwd.join(".troupe")]
    );
    assert_eq!(
        file_system.writable_roots[1].root,
        std::fs::canonicalize(extra.path()).unwrap()
    );
    assert_eq!(
        file_system.deny_read,
        vec![PathBuf::from("/nonexistent-secret")]
    );
}

#[test]
fn read_only_and_full_access() {
    let dir = tempfile::tempdir().unwrap();
    let ro = resolve_profile(SandboxMode::ReadOnly, &settings(), dir.path()).unwrap();
    assert_eq!(ro.file_system_kind(), FileSystemSandboxKind::Restricted);
    let PermissionProfile::Managed {
        file_system,
        network,
    } = &ro
    else {
        panic!("managed expected");
    };
    assert!(file_system.writable_roots.is_empty());
    assert_eq!(*network, NetworkPolicy::Restricted);
    assert_eq!(
        resolve_profile(SandboxMode::DangerFullAccess, &settings(), dir.path()).unwrap(),
        PermissionProfile::Disabled
    );
}

#[test]
fn bad_paths_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = settings();
    s.writable_roots = vec![PathBuf::from("relative/dir")];
    let err = resolve_profile(SandboxMode::WorkspaceWrite, &s, dir.path()).unwrap_err();
    assert_eq!(err, ProfileError::Relative(PathBuf::from("relative/dir")));
    assert!(err.to_string().contains("absolute"));
    s.writable_roots = vec![dir.path().join("missing")];
    let err = resolve_profile(SandboxMode::WorkspaceWrite, &s, dir.path()).unwrap_err();
    assert!(matches!(err, ProfileError::MissingRoot(_)));
    let mut s = settings();
    s.deny_read = vec![PathBuf::from("secret")];
    assert!(resolve_profile(SandboxMode::ReadOnly, &s, dir.path()).is_err());
}

#[test]
fn escalation_keeps_deny_read() {
    let dir = tempfile::tempdir().unwrap();
    let plain = resolve_profile(SandboxMode::WorkspaceWrite, &settings(), dir.path()).unwrap();
    assert_eq!(escalated(&plain), PermissionProfile::Disabled);
    let mut s = settings();
    s.deny_read = vec![PathBuf::from("/secret")];
    let guarded = resolve_profile(SandboxMode::WorkspaceWrite, &s, dir.path()).unwrap();
    let up = escalated(&guarded);
    assert_eq!(up.file_system_kind(), FileSystemSandboxKind::Unrestricted);
    assert_eq!(up.deny_read(), &[PathBuf::from("/secret")]);
}

#[test]
fn denial_detection() {
    assert!(is_likely_sandbox_denial(
        Some(1),
        "touch: cannot touch '/x': Read-only file system"
    ));
    assert!(is_likely_sandbox_denial(
        Some(2),
        "bash: /etc/x: Permission denied"
    ));
    assert!(is_likely_sandbox_denial(Some(159), ""));
    assert!(!is_likely_sandbox_denial(
        Some(1),
        "test failed: expected 3"
    ));
    assert!(!is_likely_sandbox_denial(Some(0), "permission denied"));
    assert!(!is_likely_sandbox_denial(None, "permission denied"));
}

#[test]
fn profiles_from_the_wire_must_use_absolute_paths() {
    let dir = tempfile::tempdir().unwrap();
    let good = resolve_profile(SandboxMode::WorkspaceWrite, &settings(), dir.path()).unwrap();
    assert_eq!(validate(&good), Ok(()));
    let wire = |root: &str, deny: &str| PermissionProfile::Managed {
        file_system: FileSystemPolicy {
            kind: FileSystemSandboxKind::Restricted,
            writable_roots: vec![WritableRoot {
                root: PathBuf::from(root),
                read_only_subpaths: vec![],
            }],
            deny_read: vec![PathBuf::from(deny)],
            stored_keys: vec![],
            allow_unix_sockets: vec![],
        },
        network: NetworkPolicy::Restricted,
    };
    assert_eq!(
        validate(&wire("work", "/secret")),
        Err(ProfileError::Relative(PathBuf::from("work")))
    );
    assert_eq!(
        validate(&wire("/work", "secret")),
        Err(ProfileError::Relative(PathBuf::from("secret")))
    );
    assert_eq!(validate(&PermissionProfile::Disabled), Ok(()));
}

#[test]
fn protected_names_at_every_level_from_root_to_cwd_existing_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let cwd = root.join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    let subs = protected_subpaths(&root, &cwd, &[]);
    for level in [root.clone(), root.join("a"), cwd] {
        for name in PROTECTED_NAMES {
            assert!(
                subs.contains(&level.join(name)),
                "{level:?}/{name} in {subs:?}"
            );
        }
    }
    assert_eq!(subs.len(), 6);
}

#[test]
fn symlinked_git_protects_link_and_target_and_gitdir_files_their_target() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (ws, real) = (base.join("ws"), base.join("real.git"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, ws.join(".git")).unwrap();
    let subs = protected_subpaths(&ws, &ws, &[]);
    assert!(
        subs.contains(&ws.join(".git")) && subs.contains(&real),
        "{subs:?}"
    );

    std::fs::remove_file(ws.join(".git")).unwrap();
    std::os::unix::fs::symlink("../not-yet.git", ws.join(".git")).unwrap();
    let subs = protected_subpaths(&ws, &ws, &[]);
    assert!(
        subs.contains(&base.join("not-yet.git")),
        "dangling: {subs:?}"
    );

    std::fs::remove_file(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: ../real.git\n").unwrap();
    let subs = protected_subpaths(&ws, &ws, &[]);
    assert!(
        subs.contains(&ws.join(".git")) && subs.contains(&real),
        "{subs:?}"
    );
}

#[test]
fn protected_paths_inside_or_holding_a_root_are_kept_read_only() {
    let subs = protected_subpaths(
        Path::new("/tmp"),
        Path::new("/work"),
        &[PathBuf::from("/tmp/home"), PathBuf::from("/elsewhere")],
    );
    assert!(subs.contains(&PathBuf::from("/tmp/home")));
    assert!(!subs.contains(&PathBuf::from("/elsewhere")));
    let subs = protected_subpaths(
        Path::new("/h/ws"),
        Path::new("/h/ws"),
        &[PathBuf::from("/h")],
    );
    assert!(subs.contains(&PathBuf::from("/h")));
}

#[test]
fn protected_writes_at_any_depth() {
    let root = WritableRoot {
        root: PathBuf::from("/w"),
        read_only_subpaths: vec![PathBuf::from("/w/.git"), PathBuf::from("/home-inside")],
    };
    assert!(is_protected_write(
        &root,
        Path::new("/w/.troupe/config.toml")
    ));
    assert!(is_protected_write(
        &root,
        Path::new("/w/sub/deep/.troupe/rules/x.rules")
    ));
    assert!(is_protected_write(&root, Path::new("/w/sub/.git/config")));
    assert!(!is_protected_write(&root, Path::new("/w/src/git.rs")));
    assert!(!is_protected_write(&root, Path::new("/w/.gitignore")));
}

#[test]
fn a_root_inside_a_protected_path_is_not_writable() {
    let home = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(home.path()).unwrap();
    let ws = home.join("ws");
    std::fs::create_dir(&ws).unwrap();
    let mut s = settings();
    s.protected_paths = vec![home];
    let profile = resolve_profile(SandboxMode::WorkspaceWrite, &s, &ws).unwrap();
    let PermissionProfile::Managed { file_system, .. } = profile else {
        panic!("managed expected");
    };
    assert!(file_system.writable_roots.is_empty(), "{file_system:?}");
}

fn roots_of(profile: &PermissionProfile) -> Vec<WritableRoot> {
    match profile {
        PermissionProfile::Managed { file_system, .. } => file_system.writable_roots.clone(),
        other => panic!("managed expected: {other:?}"),
    }
}

/// `<base>/repo/.git` (a directory) and a linked worktree of it at `<base>/home/worktrees/
/// repo-1`, its `.git` a file pointing at `repo/.git/worktrees/repo-1`, whose `commondir`
/// says `../..` (as git writes it).
fn linked_worktree(base: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let repo = base.join("repo");
    let git_dir = repo.join(".git/worktrees/repo-1");
    std::fs::create_dir_all(&git_dir).unwrap();
    std::fs::write(git_dir.join("commondir"), "../..\n").unwrap();
    let worktree = base.join("home/worktrees/repo-1");
    std::fs::create_dir_all(worktree.join("src")).unwrap();
    std::fs::write(
        worktree.join(".git"),
        format!("gitdir: {}\n", git_dir.display()),
    )
    .unwrap();
    (repo, git_dir, worktree)
}

#[test]
fn the_common_dir_of_a_linked_worktree_is_read_only_in_every_root_holding_it() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (repo, git_dir, worktree) = linked_worktree(&base);
    let cwd = worktree.join("src");
    // The repository lies under a writable root that is not on the cwd's path (`/tmp`).
    let subs = protected_subpaths(&base, &cwd, &[]);
    assert!(
        subs.contains(&repo.join(".git")) && subs.contains(&git_dir),
        "{subs:?}"
    );
    // An absolute `commondir` too.
    std::fs::write(
        git_dir.join("commondir"),
        format!("{}\n", repo.join(".git").display()),
    )
    .unwrap();
    assert!(protected_subpaths(&base, &cwd, &[]).contains(&repo.join(".git")));
    // A writable root inside the common dir is dropped.
    let mut s = settings();
    s.writable_roots = vec![repo.join(".git")];
    let profile = resolve_profile(SandboxMode::WorkspaceWrite, &s, &cwd).unwrap();
    assert!(
        !roots_of(&profile)
            .iter()
            .any(|w| w.root.starts_with(repo.join(".git"))),
        "{profile:?}"
    );
}

#[test]
fn a_worktree_thread_writes_its_own_worktree_and_nothing_else_of_the_home() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (repo, git_dir, worktree) = linked_worktree(&base);
    let home = base.join("home");
    let mut s = settings();
    s.protected_paths = vec![home.clone()];
    s.writable_roots = vec![base.clone()];
    let profile = resolve_profile(SandboxMode::WorkspaceWrite, &s, &worktree.join("src")).unwrap();
    let roots = roots_of(&profile);
    assert_eq!(roots[0].root, worktree);
    for ro in [worktree.join(".git"), git_dir, repo.join(".git")] {
        assert!(
            roots[0].read_only_subpaths.contains(&ro),
            "{ro:?}: {roots:?}"
        );
    }
    // The home holding it stays read-only in the root that holds the home.
    assert_eq!(roots[1].root, base);
    assert!(roots[1].read_only_subpaths.contains(&home));
    assert!(roots[1].read_only_subpaths.contains(&repo.join(".git")));
    // Another directory of the home (not a linked worktree) is still not writable.
    let other = home.join("worktrees/plain");
    std::fs::create_dir_all(&other).unwrap();
    let profile = resolve_profile(SandboxMode::WorkspaceWrite, &s, &other).unwrap();
    assert!(roots_of(&profile).iter().all(|w| w.root == base));
}
