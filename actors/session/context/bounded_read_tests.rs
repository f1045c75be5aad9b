use super::bounded_read::{read_bounded, ReadError};

#[test]
fn a_big_file_is_read_only_up_to_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("AGENTS.md");
    std::fs::write(&path, "b".repeat(10_000)).unwrap();
    let read = read_bounded(&path, 100).unwrap();
    assert_eq!(read.text.len(), 100);
    assert!(read.truncated && !read.lossy);
    assert_eq!(read.file_bytes, 10_000);
    let whole = read_bounded(&path, 10_000).unwrap();
    assert!(!whole.truncated);
    assert_eq!(whole.text.len(), 10_000);
}

#[test]
fn devices_fifos_and_folders_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    // A symlink to an endless device: followed, and refused as not a regular file.
    let link = dir.path().join("AGENTS.md");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    assert!(matches!(read_bounded(&link, 10), Err(ReadError::NotAFile)));
    // A FIFO would block the opener until a writer comes: never opened.
    let fifo = dir.path().join("fifo.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    assert!(matches!(read_bounded(&fifo, 10), Err(ReadError::NotAFile)));
    assert!(matches!(
        read_bounded(dir.path(), 10),
        Err(ReadError::NotAFile)
    ));
    assert!(matches!(
        read_bounded(&dir.path().join("missing"), 10),
        Err(ReadError::NotFound)
    ));
}

#[test]
fn invalid_utf8_inside_the_budget_is_replaced_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.md");
    std::fs::write(&path, b"ok \xff then more").unwrap();
    let read = read_bounded(&path, 100).unwrap();
    assert!(read.lossy);
    assert_eq!(read.text, "ok \u{fffd} then more");
}
