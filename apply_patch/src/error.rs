//! What can go wrong applying a patch; every message names the file and, for a chunk that
//! does not match, which chunk of which `*** Update File:` section.

use std::path::PathBuf;
use thiserror::Error;

/// The patch text does not follow the grammar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    #[error("Invalid patch: {0}")]
    Patch(String),
    #[error("Invalid patch hunk on line {line}: {message}")]
    Hunk { message: String, line: usize },
}

/// Why a patch was not applied. Nothing was written in any case.
#[derive(Debug, Error)]
pub enum PatchError {
    #[error("{0}")]
    Parse(#[from] ParseError),
    #[error("No files were modified.")]
    Empty,
    #[error(
        "the patch is {bytes} bytes; the limit is {limit} bytes: split it into smaller patches"
    )]
    TooLarge { bytes: usize, limit: usize },
    #[error("Failed to read file to update {}: {source}", path.display())]
    ReadUpdate {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("Failed to delete file {}: {source}", path.display())]
    ReadDelete {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("Failed to read file to update {}: the file is not valid UTF-8 text; \
             rewrite it with `*** Add File:` or edit it with a command", path.display())]
    NotUtf8 { path: PathBuf },
    #[error("Failed to find context '{context}' in {} (chunk {chunk} of \
             `*** Update File: {}`, patch line {line})", path.display(), path.display())]
    ContextNotFound {
        path: PathBuf,
        context: String,
        chunk: usize,
        line: usize,
    },
    #[error("Failed to find expected lines in {} (chunk {chunk} of `*** Update File: {}`, \
             patch line {line}):\n{expected}", path.display(), path.display())]
    LinesNotFound {
        path: PathBuf,
        expected: String,
        chunk: usize,
        line: usize,
    },
    #[error("Refused to change {}: the path escapes the working directory {}; no file was \
             changed", path.display(), cwd.display())]
    EscapesCwd { path: PathBuf, cwd: PathBuf },
    #[error("Refused to change {}: {reason}; no file was changed", path.display())]
    Refused {
        path: PathBuf,
        reason: super::beneath::Refusal,
    },
    #[error("{action} {}: {source}; no file was changed", path.display())]
    Write {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}
