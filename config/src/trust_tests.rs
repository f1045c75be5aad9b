use crate::trust::{sha256_hex, TrustStore, TRUST_FILE};
use pretty_assertions::assert_eq;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

#[test]
fn the_store_round_trips_and_pins_exact_content() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().join("new-home");
    assert_eq!(TrustStore::load(&home).unwrap(), TrustStore::default());
    let mut store = TrustStore::default();
    store.dirs.insert(PathBuf::from("/p/app"));
    let file = PathBuf::from("/p/app/.troupe/config.toml");
    store
        .files
        .insert(file.clone(), sha256_hex(b"model = \"m\"\n"));
    store.save(&home).unwrap();
    let mode = std::fs::metadata(&home).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "a home created here is private");
    let loaded = TrustStore::load(&home).unwrap();
    assert_eq!(loaded, store);
    assert!(loaded.trusts_dir(Path::new("/p/app/sub")));
    assert!(!loaded.trusts_dir(Path::new("/p/application")));
    assert!(loaded.is_pinned(&file, b"model = \"m\"\n"));
    assert!(!loaded.is_pinned(&file, b"model = \"m\"\n\n"));
    assert!(!loaded.is_pinned(Path::new("/p/app/other.toml"), b"model = \"m\"\n"));
}

#[test]
fn a_broken_store_is_an_error_naming_it() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(TRUST_FILE), "[files.\"/x\"]\nsha = 1\n").unwrap();
    let err = TrustStore::load(home.path()).unwrap_err().to_string();
    assert!(
        err.contains(TRUST_FILE) && err.contains("missing `sha256`"),
        "{err}"
    );
}

#[test]
fn sha256_is_lowercase_hex() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn a_declined_directory_is_remembered_and_grants_nothing() {
    let home = tempfile::tempdir().unwrap();
    let mut store = TrustStore::default();
    store.declined.insert(PathBuf::from("/p/scratch"));
    store.save(home.path()).unwrap();
    let loaded = TrustStore::load(home.path()).unwrap();
    assert_eq!(loaded, store);
    assert!(loaded.has_decided(Path::new("/p/scratch/sub")));
    assert!(!loaded.trusts_dir(Path::new("/p/scratch")));
    assert!(!loaded.has_decided(Path::new("/p/other")));
    // Trusting it later wins: the declined entry is not written beside the trusted one.
    let mut trusted = loaded;
    trusted.dirs.insert(PathBuf::from("/p/scratch"));
    trusted.save(home.path()).unwrap();
    let text = std::fs::read_to_string(home.path().join(TRUST_FILE)).unwrap();
    assert!(!text.contains("untrusted"), "{text}");
    assert!(TrustStore::load(home.path())
        .unwrap()
        .trusts_dir(Path::new("/p/scratch")));
}
