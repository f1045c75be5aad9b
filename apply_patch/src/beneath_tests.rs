//! Confinement of patches: symlinks planted or flipped cannot send a write outside the
//! writable root, `.git`/`.troupe` and deny-read paths are refused, and a refused or failed
//! patch leaves the tree exactly as it was.

use super::super::{commit, prepare, PatchError};
use super::{Confinement, Refusal};
use std::path::{Path, PathBuf};
use troupe_messages::policy::{
    FileSystemPolicy, FileSystemSandboxKind, NetworkPolicy, PermissionProfile, WritableRoot,
};

/// A workspace `ws` (the writable root) beside an `out` directory that must stay untouched.
struct Layout {
    _base: tempfile::TempDir,
    ws: PathBuf,
    out: PathBuf,
}

fn layout() -> Layout {
    let base = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(base.path()).expect("canonical");
    let ws = root.join("ws");
    let out = root.join("out");
    std::fs::create_dir(&ws).expect("mkdir ws");
    std::fs::create_dir(&out).expect("mkdir out");
    Layout {
        _base: base,
        ws,
        out,
    }
}

/// Every regular file under `dir` with its contents, symlinks as `-> target`.
fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).expect("read dir").flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            if meta.file_type().is_symlink() {
                let to = std::fs::read_link(&path).expect("readlink");
                found.push((path, format!("-> {}", to.display())));
            } else if meta.is_dir() {
                found.push((path.clone(), "dir".into()));
                stack.push(path);
            } else {
                found.push((path.clone(), std::fs::read_to_string(&path).expect("read")));
            }
        }
    }
    found.sort();
    found
}

fn workspace(ws: &Path, deny_read: Vec<PathBuf>) -> Confinement {
    Confinement::for_profile(&PermissionProfile::Managed {
        file_system: FileSystemPolicy {
            kind: FileSystemSandboxKind::Restricted,
            writable_roots: vec![WritableRoot {
                root: ws.to_path_buf(),
                read_only_subpaths: vec![],
            }],
            deny_read,
            stored_keys: vec![],
            allow_unix_sockets: vec![],
        },
        network: NetworkPolicy::Restricted,
    })
}

fn apply(patch: &str, ws: &Path, confinement: &Confinement) -> Result<(), PatchError> {
    let plan = prepare(patch, ws, confinement)?;
    commit::commit(&plan)
}

#[test]
fn a_dangling_symlink_made_live_by_the_same_patch_cannot_write_outside() {
    let l = layout();
    // L -> D/../.. : dangling until the patch creates D, then it is the workspace's parent.
    std::os::unix::fs::symlink("D/../..", l.ws.join("L")).expect("symlink");
    let before = snapshot(&l.ws);
    let patch = "*** Begin Patch\n*** Add File: D/f\n+f\n*** Add File: L/out/pwned\n+x\n\
                 *** End Patch";
    let error = apply(patch, &l.ws, &workspace(&l.ws, vec![])).expect_err("must not apply");
    assert!(error.to_string().contains("no file was changed"), "{error}");
    assert!(!l.out.join("pwned").exists());
    assert_eq!(snapshot(&l.ws), before);
    assert!(!l.ws.join("D").exists(), "created directory left behind");
}

#[test]
fn the_same_attack_without_a_profile_still_fails() {
    let l = layout();
    std::os::unix::fs::symlink("D/../..", l.ws.join("L")).expect("symlink");
    let patch = "*** Begin Patch\n*** Add File: D/f\n+f\n*** Add File: L/out/pwned\n+x\n\
                 *** End Patch";
    apply(patch, &l.ws, &Confinement::unconfined()).expect_err("must not apply");
    assert!(!l.out.join("pwned").exists());
}

#[test]
fn a_symlink_flipped_between_planning_and_writing_fails_the_patch() {
    let l = layout();
    std::fs::create_dir(l.ws.join("sub")).expect("mkdir");
    std::fs::write(l.ws.join("keep.txt"), "keep\n").expect("write");
    let confinement = workspace(&l.ws, vec![]);
    let patch = "*** Begin Patch\n*** Update File: keep.txt\n@@\n-keep\n+changed\n\
                 *** Add File: sub/x\n+x\n*** End Patch";
    let plan = prepare(patch, &l.ws, &confinement).expect("plans");
    // A background command swaps `sub` for a link out while the patch is being applied.
    std::fs::remove_dir(l.ws.join("sub")).expect("rmdir");
    std::os::unix::fs::symlink(&l.out, l.ws.join("sub")).expect("symlink");
    commit::commit(&plan).expect_err("the link must not be followed");
    assert!(!l.out.join("x").exists());
    assert_eq!(
        std::fs::read_to_string(l.ws.join("keep.txt")).expect("read"),
        "keep\n"
    );
}

#[test]
fn a_final_symlink_flipped_to_outside_is_replaced_not_followed() {
    let l = layout();
    std::fs::write(l.ws.join("a.txt"), "a\n").expect("write");
    std::fs::write(l.out.join("victim"), "victim\n").expect("write");
    let confinement = workspace(&l.ws, vec![]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** End Patch";
    let plan = prepare(patch, &l.ws, &confinement).expect("plans");
    std::fs::remove_file(l.ws.join("a.txt")).expect("rm");
    std::os::unix::fs::symlink(l.out.join("victim"), l.ws.join("a.txt")).expect("symlink");
    commit::commit(&plan).expect("the link itself is replaced");
    assert_eq!(
        std::fs::read_to_string(l.out.join("victim")).expect("read"),
        "victim\n"
    );
}

#[test]
fn symlinks_inside_the_workspace_are_followed() {
    let l = layout();
    std::fs::create_dir(l.ws.join("real")).expect("mkdir");
    std::fs::write(l.ws.join("real/a.txt"), "a\n").expect("write");
    std::os::unix::fs::symlink("real", l.ws.join("alias")).expect("symlink");
    let patch = "*** Begin Patch\n*** Update File: alias/a.txt\n@@\n-a\n+A\n*** End Patch";
    apply(patch, &l.ws, &workspace(&l.ws, vec![])).expect("applies");
    assert_eq!(
        std::fs::read_to_string(l.ws.join("real/a.txt")).expect("read"),
        "A\n"
    );
}

#[test]
fn a_symlink_out_of_the_workspace_locates_outside_the_root() {
    let l = layout();
    std::os::unix::fs::symlink(&l.out, l.ws.join("escape")).expect("symlink");
    let confinement = workspace(&l.ws, vec![]);
    let plan = prepare(
        "*** Begin Patch\n*** Add File: escape/x\n+x\n*** End Patch",
        &l.ws,
        &confinement,
    )
    .expect("plans");
    // The approval gate sees where the write really goes.
    let targets: Vec<PathBuf> = plan.targets.values().map(super::Located::path).collect();
    assert_eq!(targets, vec![l.out.join("x")]);
}

#[test]
fn metadata_directories_are_refused_at_any_depth_and_spelling() {
    let l = layout();
    std::fs::create_dir_all(l.ws.join(".git")).expect("mkdir");
    std::fs::write(l.ws.join(".git/config"), "[core]\n").expect("write");
    std::os::unix::fs::symlink(".git", l.ws.join("cfg")).expect("symlink");
    let confinement = workspace(&l.ws, vec![]);
    for path in [
        ".git/config",
        "sub/.git/hooks/pre-commit",
        ".GIT/hooks/x",
        ".troupe/config.toml",
        "cfg/hooks/post-checkout",
        "x/../.git/y",
    ] {
        let patch = format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch");
        let error = prepare(&patch, &l.ws, &confinement).expect_err(path);
        assert!(
            matches!(
                error,
                PatchError::Refused {
                    reason: Refusal::Protected,
                    ..
                }
            ),
            "{path}: {error}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(l.ws.join(".git/config")).expect("read"),
        "[core]\n"
    );
}

#[test]
fn a_deny_read_file_cannot_be_moved_read_or_deleted() {
    let l = layout();
    std::fs::create_dir(l.ws.join("conf")).expect("mkdir");
    std::fs::write(l.ws.join("conf/secret.txt"), "s3cret\n").expect("write");
    std::fs::hard_link(l.ws.join("conf/secret.txt"), l.ws.join("hard.txt")).expect("link");
    std::os::unix::fs::symlink("conf", l.ws.join("c")).expect("symlink");
    let confinement = workspace(&l.ws, vec![l.ws.join("conf")]);
    let file_confinement = workspace(&l.ws, vec![l.ws.join("conf/secret.txt")]);
    let before = snapshot(&l.ws);
    for (confinement, patch) in [
        (
            &confinement,
            "*** Update File: conf/secret.txt\n*** Move to: leak.txt\n@@\n-s3cret\n+s3cret\n",
        ),
        (
            &confinement,
            "*** Update File: c/secret.txt\n*** Move to: leak.txt\n@@\n-s3cret\n+s3cret\n",
        ),
        (&confinement, "*** Delete File: conf/secret.txt\n"),
        (&confinement, "*** Add File: conf/new.txt\n+x\n"),
        (
            &file_confinement,
            "*** Update File: hard.txt\n*** Move to: leak.txt\n@@\n-s3cret\n+s3cret\n",
        ),
    ] {
        let patch = format!("*** Begin Patch\n{patch}*** End Patch");
        let error = apply(&patch, &l.ws, confinement).expect_err(&patch);
        assert!(error.to_string().contains("deny-read"), "{patch}: {error}");
    }
    assert_eq!(snapshot(&l.ws), before);
}
