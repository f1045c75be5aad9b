//! Config errors: each says which file, line or key is wrong and what was expected.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Syntax or type error inside the file; toml's message carries line and column.
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid -c override `{raw}`: {reason}")]
    InvalidOverride { raw: String, reason: String },
    /// Type error found after overrides were applied; names the dotted key.
    #[error("config key `{key}`: {message}")]
    InvalidKey { key: String, message: String },
    #[error("model provider `{id}` is not defined; known providers: {known}")]
    UnknownProvider { id: String, known: String },
    #[error("cannot determine the home directory: set TROUPE_HOME")]
    NoHome,
}
