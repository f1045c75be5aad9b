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
    /// Type error inside a file, with the line and dotted key.
    #[error("{}:{}: key `{key}`: {message}", path.display(), line.map(|l| l.to_string()).unwrap_or_else(|| "?".into()))]
    Located {
        path: PathBuf,
        line: Option<usize>,
        key: String,
        message: String,
    },
    #[error("profile `{name}` is not defined in config.toml; known profiles: {known}")]
    UnknownProfile { name: String, known: String },
    #[error("{key} = {value} is not allowed by {}; allowed: {allowed}", path.display())]
    Disallowed {
        key: String,
        value: String,
        allowed: String,
        path: PathBuf,
    },
    #[error("--strict-config: {unknown}")]
    Strict { unknown: String },
    #[error("cannot determine the home directory: set TROUPE_HOME")]
    NoHome,
}
