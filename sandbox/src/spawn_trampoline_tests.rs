use crate::spawn_trampoline::resolve_program;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;

fn executable(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_bare_name_is_searched_in_path_in_order() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    executable(second.path(), "tool");
    let shadow = executable(first.path(), "tool");
    let path_var = format!("{}:{}", first.path().display(), second.path().display());
    let found = resolve_program(
        OsStr::new("tool"),
        std::path::Path::new("/"),
        Some(OsStr::new(&path_var)),
    );
    assert_eq!(found, Some(shadow));
}

#[test]
fn a_directory_or_a_missing_name_is_not_a_program() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tool")).unwrap();
    let path_var = dir.path().display().to_string();
    let cwd = std::path::Path::new("/");
    assert_eq!(
        resolve_program(OsStr::new("tool"), cwd, Some(OsStr::new(&path_var))),
        None
    );
    assert_eq!(
        resolve_program(OsStr::new("absent"), cwd, Some(OsStr::new(&path_var))),
        None
    );
    assert_eq!(
        resolve_program(OsStr::new(""), cwd, Some(OsStr::new(&path_var))),
        None
    );
}

#[test]
fn a_path_with_a_slash_is_taken_relative_to_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    let script = executable(&dir.path().join("bin"), "run");
    assert_eq!(
        resolve_program(OsStr::new("bin/run"), dir.path(), None),
        Some(script.clone())
    );
    assert_eq!(
        resolve_program(script.as_os_str(), std::path::Path::new("/"), None),
        Some(script)
    );
    std::fs::write(dir.path().join("plain"), "x").unwrap();
    std::fs::set_permissions(
        dir.path().join("plain"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    // Root may execute anything with an x bit; a file without any is never a program.
    assert_eq!(
        resolve_program(OsStr::new("./plain"), dir.path(), None),
        None
    );
}

#[test]
fn without_path_the_default_search_path_is_used() {
    assert!(resolve_program(OsStr::new("sh"), std::path::Path::new("/"), None).is_some());
}

#[test]
fn the_trampoline_reads_its_containment_and_refuses_a_missing_or_unknown_one() {
    use crate::containment::Containment;
    use crate::spawn_trampoline::parse;
    let args = |list: &[&str]| -> Vec<std::ffi::OsString> { list.iter().map(Into::into).collect() };
    for containment in [Containment::Session, Containment::Group] {
        let (parent, parsed, path, argv) = parse(&args(&[
            "42",
            containment.as_arg(),
            "--",
            "/bin/echo",
            "echo",
            "hi",
        ]))
        .unwrap();
        assert_eq!((parent, parsed), (42, containment));
        assert_eq!(path.to_bytes(), b"/bin/echo");
        assert_eq!(argv.len(), 2);
    }
    for bad in [
        &["42", "--", "/bin/echo", "echo"][..],
        &["42", "thread", "--", "/bin/echo", "echo"],
        &["42", "group", "/bin/echo", "echo"],
    ] {
        let err = parse(&args(bad)).unwrap_err();
        assert!(err.contains("session|group"), "{bad:?}: {err}");
    }
}
