use super::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nabc";

#[test]
fn an_image_becomes_a_data_url() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("a.png");
    std::fs::write(&png, PNG).unwrap();
    assert_eq!(
        read_image(&png, &[]).unwrap(),
        "data:image/png;base64,iVBORw0KGgphYmM="
    );
}

#[test]
fn a_path_under_deny_read_is_refused_even_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("key.png"), PNG).unwrap();
    let link = dir.path().join("innocent.png");
    std::os::unix::fs::symlink(secret.join("key.png"), &link).unwrap();
    for path in [secret.join("key.png"), link] {
        let err = read_image(&path, std::slice::from_ref(&secret)).unwrap_err();
        assert!(err.contains("deny-read"), "{err}");
    }
}

#[test]
fn missing_and_non_images_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_image(&dir.path().join("none.png"), &[]).unwrap_err();
    assert!(err.starts_with("unable to locate image at"), "{err}");
    let text = dir.path().join("notes.png");
    std::fs::write(&text, "hello").unwrap();
    let err = read_image(&text, &[]).unwrap_err();
    assert!(err.contains("invalid or unsupported image data"), "{err}");
    let err = read_image(dir.path(), &[]).unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn a_fifo_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.png");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let err = read_image(&fifo, &[]).unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
}
