//! Extra permissions the model asks for with `request_permissions` (Codex's shape), and the
//! grants a thread holds: for the rest of a turn, or for the rest of the session (recorded in
//! the rollout as `EventMsg::PermissionsGranted`, so a resumed thread keeps them).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a retry of a command the sandbox refused would add, as its approval request says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SandboxRetry {
    /// Writing to `dir` (it and everything under it), for the rest of the session.
    Write { dir: PathBuf },
    /// The network, for the rest of the session.
    Network,
    /// Nothing specific was recognised in the failure: the retry runs without the sandbox.
    Unconfined,
}

impl SandboxRetry {
    /// The question, as the user reads it.
    pub fn question(&self) -> String {
        match self {
            Self::Write { dir } => {
                format!("allow writing to {} for this session?", dir.display())
            }
            Self::Network => "allow network for this session?".into(),
            Self::Unconfined => "command failed in the sandbox; retry without it?".into(),
        }
    }
}

/// Filesystem access asked for: paths to read, paths to write (absolute, or relative to the
/// thread's cwd).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSystemPermissions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<Vec<PathBuf>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<Vec<PathBuf>>,
}

/// Network access asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkPermissions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// A permission profile as `request_permissions` carries it, asked or granted. Serialised
/// with explicit `null`s, as Codex answers the model (`{"network":null,"file_system":null}`
/// is "nothing granted").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedPermissions {
    #[serde(default)]
    pub network: Option<NetworkPermissions>,
    #[serde(default)]
    pub file_system: Option<FileSystemPermissions>,
}

impl RequestedPermissions {
    /// Whether the network is asked for.
    pub fn wants_network(&self) -> bool {
        self.network
            .as_ref()
            .and_then(|n| n.enabled)
            .unwrap_or(false)
    }

    /// The paths asked for writing.
    pub fn write_paths(&self) -> &[PathBuf] {
        self.file_system
            .as_ref()
            .and_then(|f| f.write.as_deref())
            .unwrap_or_default()
    }

    /// The paths asked for reading.
    pub fn read_paths(&self) -> &[PathBuf] {
        self.file_system
            .as_ref()
            .and_then(|f| f.read.as_deref())
            .unwrap_or_default()
    }

    /// One line for people: `write /a, read /b, network`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(
            self.write_paths()
                .iter()
                .map(|p| format!("write {}", p.display())),
        );
        parts.extend(
            self.read_paths()
                .iter()
                .map(|p| format!("read {}", p.display())),
        );
        if self.wants_network() {
            parts.push("network".into());
        }
        parts.join(", ")
    }

    /// Asks for nothing at all.
    pub fn is_empty(&self) -> bool {
        !self.wants_network() && self.write_paths().is_empty() && self.read_paths().is_empty()
    }
}

/// How long a grant holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantScope {
    /// The rest of the turn that asked.
    Turn,
    /// The rest of the session, across turns and resumes.
    Session,
}

impl GrantScope {
    /// The wire name (`turn`, `session`).
    pub fn as_str(self) -> &'static str {
        match self {
            GrantScope::Turn => "turn",
            GrantScope::Session => "session",
        }
    }
}

/// Grants added up: what widens the thread's permission profile (never beyond what
/// `requirements.toml` allows; checked when granted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionGrants {
    /// Extra writable roots (absolute, canonical).
    pub write: Vec<PathBuf>,
    /// Paths granted for reading (absolute). Reads are open everywhere but deny-read
    /// entries, which no grant lifts; kept so the model's view and the record agree.
    pub read: Vec<PathBuf>,
    /// Network on for sandboxed commands.
    pub network: bool,
}

impl PermissionGrants {
    /// Adds a granted request (its paths already absolute).
    pub fn add(&mut self, granted: &RequestedPermissions) {
        for path in granted.write_paths() {
            if !self.write.contains(path) {
                self.write.push(path.clone());
            }
        }
        for path in granted.read_paths() {
            if !self.read.contains(path) {
                self.read.push(path.clone());
            }
        }
        self.network |= granted.wants_network();
    }

    /// Adds another set of grants.
    pub fn extend(&mut self, other: &PermissionGrants) {
        for path in &other.write {
            if !self.write.contains(path) {
                self.write.push(path.clone());
            }
        }
        for path in &other.read {
            if !self.read.contains(path) {
                self.read.push(path.clone());
            }
        }
        self.network |= other.network;
    }

    /// Grants nothing.
    pub fn is_empty(&self) -> bool {
        self.write.is_empty() && self.read.is_empty() && !self.network
    }
}

/// The way out of a sandbox whose network is off, when a network proxy runs: inside the
/// sandbox's network namespace `127.0.0.1:port` is relayed to the proxy's Unix `socket` on
/// the host (the proxy lets through only the hosts approved for the thread).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyBridge {
    /// The proxy's socket (absolute).
    pub socket: PathBuf,
    /// The TCP port the command's `HTTP_PROXY`/`HTTPS_PROXY` name, inside the sandbox.
    pub port: u16,
}
