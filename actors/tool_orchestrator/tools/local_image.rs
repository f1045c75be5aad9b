//! A local image for the model (`exec -i FILE`): read, recognised by its magic bytes (PNG,
//! JPEG, GIF, WebP — never by its name), size-checked, and turned into the `data:` URL the
//! `input_image` part carries. Each failure says which file and why.

use base64::Engine;
use std::io::Read;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Largest image attached (the providers' own per-image limits are around 20 MB).
pub const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ImageError {
    #[error("{}: cannot read it: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("{}: not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("{}: {size} bytes; the limit is {MAX_IMAGE_BYTES} bytes", path.display())]
    TooLarge { path: PathBuf, size: u64 },
    #[error("{}: not a PNG, JPEG, GIF or WebP image", path.display())]
    NotAnImage { path: PathBuf },
}

/// The media type of an image, from its first bytes.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Reads the image at `path` (blocking) and returns its `data:` URL.
pub fn load_data_url(path: &Path) -> Result<String, ImageError> {
    let file = open_image(path).map_err(|err| ImageError::Unreadable {
        path: path.to_path_buf(),
        reason: err.to_string(),
    })?;
    data_url_of_file(file, path)
}

/// Opens `path` for reading without blocking on a FIFO or a device that never answers (the
/// type is checked on the open file before anything is read).
pub fn open_image(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// The `data:` URL of an image already opened (blocking); `path` names it in errors.
pub fn data_url_of_file(file: std::fs::File, path: &Path) -> Result<String, ImageError> {
    let unreadable = |err: std::io::Error| ImageError::Unreadable {
        path: path.to_path_buf(),
        reason: err.to_string(),
    };
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(ImageError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // Bounded even if the file grows after the size check.
    file.take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
        });
    }
    let media_type = sniff(&bytes).ok_or_else(|| ImageError::NotAnImage {
        path: path.to_path_buf(),
    })?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(format!("data:{media_type};base64,{data}"))
}

#[cfg(test)]
#[path = "local_image_tests.rs"]
mod tests;
