//! `requirements.toml`: constraints set by an administrator that no config layer or flag can
//! loosen (allowed approval policies and sandbox modes).

use crate::error::ConfigError;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use troupe_messages::policy::{AskForApproval, SandboxMode};

/// The constraints; an absent list allows everything.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Requirements {
    pub allowed_approval_policies: Option<Vec<AskForApproval>>,
    pub allowed_sandbox_modes: Option<Vec<SandboxMode>>,
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

impl Requirements {
    /// Reads `path`; a missing file means no constraints.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = match crate::regular_file::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        let mut requirements: Requirements =
            toml::from_str(&text).map_err(|err| ConfigError::Parse {
                path: path.to_path_buf(),
                message: err.to_string(),
            })?;
        requirements.source = Some(path.to_path_buf());
        Ok(requirements)
    }

    /// The value to use: `wanted` if allowed; when it was not asked for explicitly, the first
    /// allowed value; otherwise an error naming the requirements file.
    pub fn constrain<T: Copy + PartialEq + std::fmt::Debug>(
        &self,
        key: &str,
        wanted: T,
        explicit: bool,
        allowed: &Option<Vec<T>>,
    ) -> Result<T, ConfigError> {
        let Some(allowed) = allowed else {
            return Ok(wanted);
        };
        if allowed.contains(&wanted) {
            return Ok(wanted);
        }
        match (explicit, allowed.first()) {
            (false, Some(first)) => Ok(*first),
            _ => Err(ConfigError::Disallowed {
                key: key.to_string(),
                value: format!("{wanted:?}"),
                allowed: format!("{allowed:?}"),
                path: self.source.clone().unwrap_or_default(),
            }),
        }
    }
}
