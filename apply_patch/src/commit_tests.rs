//! Atomicity: a failure while writing leaves the tree exactly as it was, with no temp files,
//! backups or new directories behind. (Failures in the plan never reach `commit`; the
//! table in `apply_tests.rs` covers those.)

use super::super::apply_patch;
use super::super::apply_tests::snapshot;
use pretty_assertions::assert_eq;
use std::path::Path;

fn dirs(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).expect("read dir").flatten() {
            if entry.path().is_dir() {
                found.push(entry.path().display().to_string());
                stack.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn failure_in_third_file_while_swapping_restores_first_two() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
    std::fs::write(dir.path().join("b.txt"), "b\n").expect("write");
    // `c` is a directory, so installing a file there fails after a and b were swapped in.
    std::fs::create_dir(dir.path().join("c")).expect("mkdir");
    std::fs::write(dir.path().join("c/keep.txt"), "keep\n").expect("write");
    let before = snapshot(dir.path());
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n\
                 *** Delete File: b.txt\n*** Add File: c\n+c\n*** End Patch";
    let error = apply_patch(patch, dir.path()).expect_err("c is a directory");
    assert!(error.to_string().contains("c"), "{error}");
    assert!(error.to_string().contains("no file was changed"), "{error}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn failure_while_staging_removes_created_directories() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
    std::fs::write(dir.path().join("file"), "not a dir\n").expect("write");
    let before = snapshot(dir.path());
    let dirs_before = dirs(dir.path());
    // new/deep/x.txt needs two new directories; file/y.txt cannot be created at all.
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n\
                 *** Add File: new/deep/x.txt\n+x\n*** Add File: file/y.txt\n+y\n*** End Patch";
    let error = apply_patch(patch, dir.path()).expect_err("file is not a directory");
    assert!(error.to_string().contains("file/y.txt"), "{error}");
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(dirs(dir.path()), dirs_before);
}

#[test]
fn success_leaves_no_temp_or_backup_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
    std::fs::write(dir.path().join("b.txt"), "b\n").expect("write");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n\
                 *** Delete File: b.txt\n*** Add File: c.txt\n+c\n*** End Patch";
    apply_patch(patch, dir.path()).expect("applies");
    let names: Vec<String> = snapshot(dir.path()).into_keys().collect();
    assert_eq!(names, vec!["a.txt".to_string(), "c.txt".to_string()]);
}

#[cfg(unix)]
#[test]
fn file_mode_is_kept_on_update() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "echo a\n").expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let patch = "*** Begin Patch\n*** Update File: run.sh\n@@\n-echo a\n+echo b\n*** End Patch";
    apply_patch(patch, dir.path()).expect("applies");
    let mode = std::fs::metadata(&script)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[cfg(unix)]
#[test]
fn update_through_symlink_changes_the_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("real.txt"), "a\n").expect("write");
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).expect("symlink");
    let patch = "*** Begin Patch\n*** Update File: link.txt\n@@\n-a\n+b\n*** End Patch";
    apply_patch(patch, dir.path()).expect("applies");
    let link = std::fs::symlink_metadata(dir.path().join("link.txt")).expect("lstat");
    assert!(link.file_type().is_symlink());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("real.txt")).expect("read"),
        "b\n"
    );
}
