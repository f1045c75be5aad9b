//! The trust store, `$TROUPE_HOME/trust.toml`: which project directories the user trusts and
//! the SHA-256 of every project file (`.troupe/config.toml`, `.troupe/rules/*.rules`) they
//! confirmed. A project file is obeyed only while its content still has the recorded hash,
//! so a file a command planted or changed is inert until the user runs `troupe trust` again.
//! The store lives under `$TROUPE_HOME`, which no sandboxed command can write.
//!
//! ```toml
//! [projects."/home/me/app"]
//! trust_level = "trusted"
//!
//! [projects."/home/me/scratch"]
//! trust_level = "untrusted"
//!
//! [files."/home/me/app/.troupe/config.toml"]
//! sha256 = "9f86d08…"
//! ```

use crate::error::ConfigError;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// File name of the store inside `$TROUPE_HOME`.
pub const TRUST_FILE: &str = "trust.toml";

/// Trusted directories, directories the user chose not to trust, and pinned file hashes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustStore {
    pub dirs: BTreeSet<PathBuf>,
    /// Answered "do not trust" on the UI's first-start screen: not asked again, still
    /// untrusted (an entry here never grants anything).
    pub declined: BTreeSet<PathBuf>,
    pub files: BTreeMap<PathBuf, String>,
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl TrustStore {
    /// Reads `home/trust.toml`; a missing file is an empty store.
    pub fn load(home: &Path) -> Result<Self, ConfigError> {
        let path = home.join(TRUST_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let bad = |message: String| ConfigError::Parse {
            path: path.clone(),
            message,
        };
        let table: Table = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let mut store = Self::default();
        for (key, entry) in table_at(&table, "projects") {
            match entry.get("trust_level").and_then(Value::as_str) {
                Some("trusted") => {
                    store.dirs.insert(PathBuf::from(key));
                }
                Some("untrusted") => {
                    store.declined.insert(PathBuf::from(key));
                }
                _ => {}
            }
        }
        for (key, entry) in table_at(&table, "files") {
            let sha = entry
                .get("sha256")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("files.\"{key}\": missing `sha256`")))?;
            store.files.insert(PathBuf::from(key), sha.to_string());
        }
        Ok(store)
    }

    /// Whether `dir` (canonical) is, or is inside, a trusted directory.
    pub fn trusts_dir(&self, dir: &Path) -> bool {
        self.dirs.iter().any(|d| dir.starts_with(d))
    }

    /// Whether the user already answered the trust question for `dir` (canonical): it or a
    /// parent is trusted or declined.
    pub fn has_decided(&self, dir: &Path) -> bool {
        self.trusts_dir(dir) || self.declined.iter().any(|d| dir.starts_with(d))
    }

    /// Whether `path` is pinned with exactly this content.
    pub fn is_pinned(&self, path: &Path, content: &[u8]) -> bool {
        self.files
            .get(path)
            .is_some_and(|sha| *sha == sha256_hex(content))
    }

    /// Writes the store to `home/trust.toml` (atomically: a temp file renamed over it),
    /// creating `home` (mode 0700) when needed.
    pub fn save(&self, home: &Path) -> Result<(), ConfigError> {
        let path = home.join(TRUST_FILE);
        let io_err = |source| ConfigError::Read {
            path: path.clone(),
            source,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(home)
            .map_err(io_err)?;
        let mut projects = Table::new();
        for dir in &self.dirs {
            let mut entry = Table::new();
            entry.insert("trust_level".into(), Value::String("trusted".into()));
            projects.insert(dir.display().to_string(), Value::Table(entry));
        }
        for dir in self.declined.iter().filter(|d| !self.dirs.contains(*d)) {
            let mut entry = Table::new();
            entry.insert("trust_level".into(), Value::String("untrusted".into()));
            projects.insert(dir.display().to_string(), Value::Table(entry));
        }
        let mut files = Table::new();
        for (file, sha) in &self.files {
            let mut entry = Table::new();
            entry.insert("sha256".into(), Value::String(sha.clone()));
            files.insert(file.display().to_string(), Value::Table(entry));
        }
        let mut root = Table::new();
        root.insert("projects".into(), Value::Table(projects));
        root.insert("files".into(), Value::Table(files));
        let text = format!(
            "# Written by `troupe trust`: trusted project directories and the SHA-256 of each\n\
             # project file Troupe may obey. A file whose content changes is ignored until\n\
             # `troupe trust` records it again.\n\n{}",
            toml::to_string(&root).map_err(|e| ConfigError::Parse {
                path: path.clone(),
                message: e.to_string(),
            })?
        );
        let temp = home.join(format!("{TRUST_FILE}.{}.tmp", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)
            .map_err(io_err)?;
        file.write_all(text.as_bytes()).map_err(io_err)?;
        file.sync_all().map_err(io_err)?;
        std::fs::rename(&temp, &path).map_err(io_err)
    }
}

fn table_at<'a>(table: &'a Table, key: &str) -> impl Iterator<Item = (&'a String, &'a Table)> {
    table
        .get(key)
        .and_then(Value::as_table)
        .into_iter()
        .flat_map(|t| t.iter())
        .filter_map(|(k, v)| v.as_table().map(|t| (k, t)))
}
