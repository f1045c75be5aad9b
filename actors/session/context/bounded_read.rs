//! Reading instruction files within a budget: never more than the budget is read into memory
//! (a 50 MB AGENTS.md costs its first bytes, not 50 MB), and only regular files are opened (a
//! FIFO would block the session, a device would never end).

use std::io::Read;
use std::path::Path;

/// A file's first bytes, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedText {
    pub text: String,
    /// The file's size; more than `text` holds when it was cut.
    pub file_bytes: u64,
    pub truncated: bool,
    /// Invalid UTF-8 was replaced.
    pub lossy: bool,
}

/// Why a file could not be read.
#[derive(Debug)]
pub enum ReadError {
    NotFound,
    NotAFile,
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotFound => write!(f, "not found"),
            ReadError::NotAFile => write!(f, "not a regular file"),
            ReadError::Io(err) => write!(f, "{err}"),
        }
    }
}

/// Reads at most `limit` bytes of `path` (following symlinks). A cut in the middle of a
/// UTF-8 character drops that character.
pub fn read_bounded(path: &Path, limit: usize) -> Result<BoundedText, ReadError> {
    let meta = std::fs::metadata(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotFound,
        _ => ReadError::Io(err),
    })?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile);
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut data = Vec::with_capacity(limit.min(meta.len() as usize).min(1 << 20));
    // One byte past the budget tells a cut file from one that fits (the size may change).
    file.take(limit as u64 + 1)
        .read_to_end(&mut data)
        .map_err(ReadError::Io)?;
    let truncated = data.len() > limit;
    data.truncate(limit);
    let file_bytes = meta.len().max(data.len() as u64 + u64::from(truncated));
    let (text, lossy) = match String::from_utf8(data) {
        Ok(text) => (text, false),
        Err(err) => {
            let valid_up_to = err.utf8_error().valid_up_to();
            let cut_char = truncated && err.utf8_error().error_len().is_none();
            let mut bytes = err.into_bytes();
            if cut_char {
                // Only the last character was cut by the budget: the rest is valid.
                bytes.truncate(valid_up_to);
                match String::from_utf8(bytes) {
                    Ok(text) => (text, false),
                    Err(err) => (String::from_utf8_lossy(err.as_bytes()).into_owned(), true),
                }
            } else {
                (String::from_utf8_lossy(&bytes).into_owned(), true)
            }
        }
    };
    Ok(BoundedText {
        text,
        file_bytes,
        truncated,
        lossy,
    })
}
