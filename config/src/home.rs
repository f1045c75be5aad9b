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
