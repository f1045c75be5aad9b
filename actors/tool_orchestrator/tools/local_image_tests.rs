use super::*;

#[test]
fn formats_are_recognised_by_magic_bytes() {
    assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
    assert_eq!(sniff(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
    assert_eq!(sniff(b"GIF89a...."), Some("image/gif"));
    assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
    assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
    assert_eq!(sniff(b"<svg>"), None);
}

#[test]
fn a_file_becomes_a_data_url_and_bad_files_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("a.txt");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\nabc").unwrap();
    let url = load_data_url(&png).unwrap();
    assert_eq!(url, "data:image/png;base64,iVBORw0KGgphYmM=");

    let text = dir.path().join("b.png");
    std::fs::write(&text, "hello").unwrap();
    assert_eq!(
        load_data_url(&text),
        Err(ImageError::NotAnImage { path: text.clone() })
    );
    assert!(matches!(
        load_data_url(&dir.path().join("missing.png")),
        Err(ImageError::Unreadable { .. })
    ));
    assert_eq!(
        load_data_url(dir.path()),
        Err(ImageError::NotAFile {
            path: dir.path().to_path_buf()
        })
    );
    let big = dir.path().join("big.png");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(MAX_IMAGE_BYTES + 1).unwrap();
    assert!(matches!(
        load_data_url(&big),
        Err(ImageError::TooLarge { .. })
    ));
}
