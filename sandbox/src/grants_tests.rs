use super::*;
use crate::profile::resolve_profile;
use pretty_assertions::assert_eq;
use troupe_messages::policy::SandboxMode;

fn settings() -> SandboxSettings {
    SandboxSettings {
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: true,
        ..SandboxSettings::default()
    }
}

fn write(paths: &[&Path]) -> RequestedPermissions {
    RequestedPermissions {
        network: None,
        file_system: Some(FileSystemPermissions {
            read: None,
            write: Some(paths.iter().map(|p| p.to_path_buf()).collect()),
        }),
    }
}

#[test]
fn relative_write_paths_resolve_against_the_cwd_and_come_back_canonical() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.path().join("out")).unwrap();
    let checked = check_request(&write(&[Path::new("out")]), &settings(), cwd.path()).unwrap();
    let expected = std::fs::canonicalize(cwd.path().join("out")).unwrap();
    assert_eq!(checked.write_paths(), &[expected]);
    assert!(!checked.wants_network());
}

#[test]
fn bad_requests_are_refused_with_the_reason() {
    let cwd = tempfile::tempdir().unwrap();
    let s = settings();
    assert_eq!(
        check_request(&RequestedPermissions::default(), &s, cwd.path()),
        Err(GrantError::Empty)
    );
    let missing = cwd.path().join("missing");
    assert!(matches!(
        check_request(&write(&[&missing]), &s, cwd.path()),
        Err(GrantError::NotADirectory(_))
    ));
    let mut denied = settings();
    let secret = cwd.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    denied.deny_read = vec![secret.clone()];
    assert!(matches!(
        check_request(&write(&[&secret]), &denied, cwd.path()),
        Err(GrantError::DenyRead(..))
    ));
    let mut home = settings();
    home.protected_paths = vec![cwd.path().to_path_buf()];
    assert!(matches!(
        check_request(&write(&[&secret]), &home, cwd.path()),
        Err(GrantError::Protected(..))
    ));
    let mut read_only = settings();
    read_only.grants_forbidden = true;
    let network = RequestedPermissions {
        network: Some(NetworkPermissions {
            enabled: Some(true),
        }),
        file_system: None,
    };
    assert_eq!(
        check_request(&network, &read_only, cwd.path()),
        Err(GrantError::Forbidden)
    );
}

#[test]
fn grants_widen_a_restricted_profile_and_keep_git_read_only() {
    let cwd = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    std::fs::create_dir(extra.path().join(".git")).unwrap();
    let root = std::fs::canonicalize(extra.path()).unwrap();
    let s = settings();
    let base = resolve_profile(SandboxMode::WorkspaceWrite, &s, cwd.path()).unwrap();
    let grants = PermissionGrants {
        write: vec![root.clone()],
        read: Vec::new(),
        network: true,
    };
    let widened = widen(base.clone(), &grants, &s, cwd.path());
    let PermissionProfile::Managed {
        file_system,
        network,
    } = &widened
    else {
        panic!("managed expected");
    };
    assert_eq!(*network, NetworkPolicy::Enabled);
    let added = file_system
        .writable_roots
        .iter()
        .find(|w| w.root == root)
        .expect("granted root");
    assert!(added.read_only_subpaths.contains(&root.join(".git")));
    assert!(!already_allowed(&base, &write(&[&root])));
    assert!(already_allowed(&widened, &write(&[&root])));
    assert_eq!(
        widen(PermissionProfile::Disabled, &grants, &s, cwd.path()),
        PermissionProfile::Disabled
    );
}
