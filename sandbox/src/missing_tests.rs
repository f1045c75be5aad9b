use super::{find, Missing};
use std::path::{Path, PathBuf};
use troupe_messages::policy::{
    FileSystemPolicy, FileSystemSandboxKind, NetworkPolicy, PermissionProfile, WritableRoot,
};

fn profile(roots: &[&str], network: NetworkPolicy) -> PermissionProfile {
    PermissionProfile::Managed {
        file_system: FileSystemPolicy {
            kind: FileSystemSandboxKind::Restricted,
            writable_roots: roots
                .iter()
                .map(|root| WritableRoot {
                    root: PathBuf::from(root),
                    read_only_subpaths: vec![Path::new(root).join(".git")],
                })
                .collect(),
            deny_read: Vec::new(),
            stored_keys: Vec::new(),
            allow_unix_sockets: Vec::new(),
        },
        network,
    }
}

fn workspace() -> PermissionProfile {
    profile(&["/work/proj"], NetworkPolicy::Restricted)
}

fn write(path: &str, dir: &str) -> Option<Missing> {
    Some(Missing::Write {
        path: PathBuf::from(path),
        dir: PathBuf::from(dir),
    })
}

fn cwd() -> &'static Path {
    Path::new("/work/proj")
}

#[test]
fn a_refused_write_outside_the_roots_names_its_directory() {
    for (output, path, dir) in [
        (
            "touch: cannot touch '/srv/data/out.txt': Read-only file system",
            "/srv/data/out.txt",
            "/srv/data",
        ),
        (
            "sh: 1: cannot create /srv/data/log: Read-only file system",
            "/srv/data/log",
            "/srv/data",
        ),
        (
            "bash: /etc/hosts: Read-only file system",
            "/etc/hosts",
            "/etc",
        ),
        (
            "mkdir: cannot create directory ‘/opt/cache’: Read-only file system",
            "/opt/cache",
            "/opt",
        ),
        (
            "OSError: [Errno 30] Read-only file system: '/srv/data/x.json'",
            "/srv/data/x.json",
            "/srv/data",
        ),
        (
            "PermissionError: [Errno 13] Permission denied: '/srv/data/x'",
            "/srv/data/x",
            "/srv/data",
        ),
        (
            "cp: cannot create regular file '../sibling/a.txt': Read-only file system",
            "/work/sibling/a.txt",
            "/work/sibling",
        ),
    ] {
        assert_eq!(
            find(output, &workspace(), cwd()),
            write(path, dir),
            "{output}"
        );
    }
}

#[test]
fn read_only_mode_asks_for_the_working_directory_itself() {
    let read_only = profile(&[], NetworkPolicy::Restricted);
    let output = "touch: cannot touch 'notes.txt': Read-only file system\n";
    assert_eq!(
        find(output, &read_only, cwd()),
        write("/work/proj/notes.txt", "/work/proj")
    );
    let output = "sh: 1: cannot create out.log: Read-only file system\n";
    assert_eq!(
        find(output, &read_only, cwd()),
        write("/work/proj/out.log", "/work/proj")
    );
}

#[test]
fn a_path_kept_read_only_on_purpose_offers_no_grant() {
    let output = "touch: cannot touch '/work/proj/.git/config': Read-only file system";
    assert_eq!(find(output, &workspace(), cwd()), None);
}

#[test]
fn a_refusal_inside_a_writable_root_is_not_the_sandbox() {
    let output = "rm: cannot remove 'owned-by-root': Permission denied\nexit 1";
    assert_eq!(find(output, &workspace(), cwd()), None);
}

#[test]
fn a_network_failure_with_the_network_off_asks_for_the_network() {
    for output in [
        "curl: (6) Could not resolve host: example.com",
        "ssh: Could not resolve hostname github.com: Temporary failure in name resolution",
        "ping: socket: Operation not permitted",
        "fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com",
        "connect: Network is unreachable",
    ] {
        assert_eq!(
            find(output, &workspace(), cwd()),
            Some(Missing::Network),
            "{output}"
        );
    }
}

#[test]
fn a_network_failure_with_the_network_on_is_not_the_sandbox() {
    let online = profile(&["/work/proj"], NetworkPolicy::Enabled);
    let output = "curl: (6) Could not resolve host: nonexistent.invalid";
    assert_eq!(find(output, &online, cwd()), None);
}

#[test]
fn the_first_refusal_in_the_output_wins() {
    let output = "curl: (6) Could not resolve host: example.com\n\
                  touch: cannot touch '/srv/x': Read-only file system";
    assert_eq!(find(output, &workspace(), cwd()), Some(Missing::Network));
    let output = "touch: cannot touch '/srv/x': Read-only file system\n\
                  curl: (6) Could not resolve host: example.com";
    assert_eq!(find(output, &workspace(), cwd()), write("/srv/x", "/srv"));
}

#[test]
fn unrecognised_failures_and_unconfined_profiles_find_nothing() {
    assert_eq!(find("error: something broke", &workspace(), cwd()), None);
    let output = "touch: cannot touch '/srv/x': Read-only file system";
    assert_eq!(find(output, &PermissionProfile::Disabled, cwd()), None);
}
