use super::*;

fn run_with(args: &[&str], stdin: &str) -> (u8, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let args = args.iter().map(OsString::from).collect();
    let code = run(args, &mut stdin.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, err) = run_with(&[], "");
    assert_eq!(code, 2);
    assert!(err.starts_with("Usage: apply_patch 'PATCH'"), "{err}");
    let (code, _, err) = run_with(&["a", "b"], "");
    assert_eq!(code, 2);
    assert_eq!(err, "Error: apply_patch accepts exactly one argument.\n");
}

#[test]
fn bad_patch_exits_1_with_codex_message() {
    let (code, out, err) = run_with(&["garbage"], "");
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        "Invalid patch: The first line of the patch must be '*** Begin Patch'\n"
    );
}

fn lock(path: &std::path::Path) -> std::fs::File {
    lock_file(path, true).unwrap().expect("free lock")
}

#[test]
fn link_dirs_are_private_and_refuse_symlinks_and_loose_modes() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let base = private_dir_chain(&home.path().join("h"), &["tmp", "arg0"]).unwrap();
    let mode = std::fs::metadata(&base).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);

    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = private_dir_chain(&home.path().join("h"), &["tmp", "arg0"]).unwrap_err();
    assert!(err.contains("writable by group or others"), "{err}");

    // A link (say, into a writable root) in place of `tmp` is refused, not followed.
    let other = tempfile::tempdir().unwrap();
    let linked = home.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(other.path(), linked.join("tmp")).unwrap();
    let err = private_dir_chain(&linked, &["tmp", "arg0"]).unwrap_err();
    assert!(err.contains("is a symlink"), "{err}");
}

#[test]
fn sweep_removes_dead_runs_and_keeps_live_ones() {
    let base = tempfile::tempdir().unwrap();
    let dead = base.path().join("troupe-arg0-dead");
    let live = base.path().join("troupe-arg0-live");
    let young = base.path().join("troupe-arg0-young");
    let other = base.path().join("unrelated");
    for dir in [&dead, &live, &young, &other] {
        std::fs::create_dir(dir).unwrap();
    }
    drop(lock(&dead.join(LOCK_FILE)));
    let held = lock(&live.join(LOCK_FILE));
    sweep_stale(base.path());
    assert!(!dead.exists(), "a run whose lock is free is gone");
    assert!(live.exists(), "a live run's directory stays");
    assert!(young.exists(), "a directory still getting its lock stays");
    assert!(other.exists());
    drop(held);
    sweep_stale(base.path());
    assert!(!live.exists());
}
