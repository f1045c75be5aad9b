//! Where Troupe keeps its files: `$TROUPE_HOME`, default `~/.troupe`.

use crate::error::ConfigError;
use std::path::PathBuf;

/// The Troupe home directory (not created here).
pub fn troupe_home() -> Result<PathBuf, ConfigError> {
    if let Some(home) = std::env::var_os("TROUPE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|home| PathBuf::from(home).join(".troupe"))
        .ok_or(ConfigError::NoHome)
}

/// What in the home no sandboxed command may read: the files that hold keys (the provider
/// keys of `troupe login`, the MCP OAuth tokens) and the checkpoint store (copies of the
/// work tree, which `troupe rewind` writes back: a command that could change it could
/// choose what a rewind writes).
pub const STORED_KEY_FILES: &[&str] = &["auth.json", ".credentials.json", CHECKPOINTS_DIR];

/// The checkpoint store under the home (`troupe rewind`).
pub const CHECKPOINTS_DIR: &str = "checkpoints";

/// The paths of [`STORED_KEY_FILES`] in `home`.
pub fn stored_key_paths(home: &std::path::Path) -> Vec<PathBuf> {
    STORED_KEY_FILES
        .iter()
        .map(|name| home.join(name))
        .collect()
}
