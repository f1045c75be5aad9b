#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::{read, read_to_string};
use std::io::ErrorKind;

#[test]
fn a_regular_file_reads_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.toml");
    std::fs::write(&path, "model = \"x\"\n").unwrap();
    assert_eq!(read_to_string(&path).unwrap(), "model = \"x\"\n");
    assert_eq!(read(&path).unwrap(), b"model = \"x\"\n");
}

#[test]
fn a_fifo_is_refused_at_once_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let err = read_to_string(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(err.to_string(), "not a regular file (a FIFO)");
}

#[test]
fn directories_and_devices_are_refused_and_missing_files_keep_their_kind() {
    let dir = tempfile::tempdir().unwrap();
    assert!(read(dir.path())
        .unwrap_err()
        .to_string()
        .contains("a directory"));
    assert!(read(std::path::Path::new("/dev/zero"))
        .unwrap_err()
        .to_string()
        .contains("a device"));
    let missing = read(&dir.path().join("missing")).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
}
