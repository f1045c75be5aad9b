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

/// The files of the home that hold keys (the provider keys of `troupe login`, the MCP OAuth
/// tokens): no sandboxed command may read them.
pub const STORED_KEY_FILES: &[&str] = &["auth.json", ".credentials.json"];

/// The paths of [`STORED_KEY_FILES`] in `home`.
pub fn stored_key_paths(home: &std::path::Path) -> Vec<PathBuf> {
    STORED_KEY_FILES
        .iter()
        .map(|name| home.join(name))
        .collect()
}
