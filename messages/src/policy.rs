//! Permission settings: when to ask the user, and how commands are confined.
//!
//! Two independent layers: [`AskForApproval`] decides whether a human
//! is asked; the sandbox ([`SandboxMode`] + [`SandboxSettings`], resolved per call into a
//! [`PermissionProfile`]) decides what the kernel lets the command do. Both must agree
//! before a side effect happens.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// When the runtime asks the user before running a tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    /// Ask for everything but known-safe read-only commands.
    #[serde(rename = "untrusted")]
    UnlessTrusted,
    /// Commands run sandboxed; the model asks to escalate; the default.
    #[default]
    OnRequest,
    /// Ask when a sandboxed attempt fails (kept for Codex config compatibility).
    OnFailure,
    /// Never ask; failures go back to the model.
    Never,
    /// Per-class switches: a class whose prompt is disallowed is refused instead of asked.
    Granular(GranularApprovalConfig),
}

impl AskForApproval {
    /// The wire name, as in `-a/--ask-for-approval`.
    pub fn as_str(self) -> &'static str {
        match self {
            AskForApproval::UnlessTrusted => "untrusted",
            AskForApproval::OnRequest => "on-request",
            AskForApproval::OnFailure => "on-failure",
            AskForApproval::Never => "never",
            AskForApproval::Granular(_) => "granular",
        }
    }
}

/// Which classes of approval prompt `granular` lets through; `false` turns a prompt of that
/// class into a refusal (never into a silent allow).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct GranularApprovalConfig {
    /// Prompts to run a command outside (or despite) the sandbox.
    pub sandbox_approval: bool,
    /// Prompts demanded by a `prompt` command rule.
    pub rules: bool,
    /// Prompts to apply a patch.
    pub patch_approval: bool,
}

impl Default for GranularApprovalConfig {
    fn default() -> Self {
        Self {
            sandbox_approval: true,
            rules: true,
            patch_approval: true,
        }
    }
}

/// How strongly commands are confined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read anything, write nothing.
    #[default]
    ReadOnly,
    /// Write inside the workspace roots and temp dirs.
    WorkspaceWrite,
    /// No confinement.
    DangerFullAccess,
}

impl SandboxMode {
    /// The wire name, as in `-s/--sandbox`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }
}

/// Which Linux mechanism confines a sandboxed command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxBackendKind {
    /// `linux` when namespaces can be created, else `landlock`, else refuse.
    #[default]
    Auto,
    /// Namespaces + read-only binds + seccomp + Landlock + no caps.
    Linux,
    /// Landlock + seccomp + no caps, without namespaces (weaker).
    Landlock,
}

/// Sandbox knobs beside `sandbox_mode` (`[sandbox_workspace_write]` and friends in config).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxSettings {
    /// Extra writable roots besides the cwd (workspace-write only); absolute.
    pub writable_roots: Vec<PathBuf>,
    /// Network for sandboxed commands (workspace-write only).
    pub network_access: bool,
    /// Do not make `$TMPDIR` writable.
    pub exclude_tmpdir_env_var: bool,
    /// Do not make `/tmp` writable.
    pub exclude_slash_tmp: bool,
    /// Paths no command may read, even after an escalation; absolute.
    pub deny_read: Vec<PathBuf>,
    /// Troupe's own credential files (`$TROUPE_HOME/auth.json`, `.credentials.json`):
    /// unreadable to every sandboxed command, as `deny_read`, but not to an approved
    /// escalation (which runs unsandboxed); absolute.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stored_keys: Vec<PathBuf>,
    /// Host Unix sockets commands may still connect to with the network off; absolute.
    pub allow_unix_sockets: Vec<PathBuf>,
    /// Which backend to use.
    pub backend: SandboxBackendKind,
    /// `.troupe/rules` folders of a trusted project, root → cwd (loaded after
    /// `$TROUPE_HOME/rules`); empty for an untrusted project.
    pub project_rules_dirs: Vec<PathBuf>,
    /// Pinned project rules files (path → SHA-256, hex) the user trusted; a file of
    /// `project_rules_dirs` is loaded only when its content still has this hash.
    pub pinned_rules: std::collections::BTreeMap<PathBuf, String>,
    /// Directories kept read-only wherever a writable root contains them (`$TROUPE_HOME`:
    /// config, rules, trust store, the `apply_patch` link directory).
    pub protected_paths: Vec<PathBuf>,
    /// `exec --ignore-rules`: load no `.rules` file (user or project) for this thread.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ignore_rules: bool,
    /// `requirements.toml` allows no sandbox mode but `read-only`: `request_permissions`
    /// may then grant no write and no network (a grant never goes beyond the requirements).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub grants_forbidden: bool,
    /// `[network_proxy]`: the way out for approved hosts when the network is off.
    #[serde(skip_serializing_if = "NetworkProxySettings::is_off")]
    pub network_proxy: NetworkProxySettings,
}

/// The port `HTTP_PROXY` names inside the sandbox unless `network_proxy.port` says another.
pub const DEFAULT_PROXY_PORT: u16 = 3128;

/// `[network_proxy]` resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetworkProxySettings {
    /// Run the proxy for `shell` commands of the `linux` sandbox whose network is off.
    pub enabled: bool,
    /// The TCP port inside the sandbox.
    pub port: u16,
    /// Lower-case host name → IP address, used instead of DNS (may be local: the user
    /// pinned it).
    pub hosts: std::collections::BTreeMap<String, String>,
    /// Lower-case host names the proxy may connect to on the host's loopback or a private
    /// network; every other name reaches public addresses only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_local_names: Vec<String>,
}

impl Default for NetworkProxySettings {
    fn default() -> Self {
        Self {
            enabled: false,
            port: DEFAULT_PROXY_PORT,
            hosts: Default::default(),
            allow_local_names: Vec::new(),
        }
    }
}

impl NetworkProxySettings {
    fn is_off(&self) -> bool {
        !self.enabled
    }
}

/// The legacy, Codex-compatible sandbox policy: what `sandbox_mode` + settings mean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SandboxPolicy {
    /// No confinement at all.
    DangerFullAccess,
    /// Read anything, write nothing.
    ReadOnly { network_access: bool },
    /// Write the cwd, the extra roots and (unless excluded) the temp dirs.
    WorkspaceWrite {
        writable_roots: Vec<PathBuf>,
        network_access: bool,
        exclude_tmpdir_env_var: bool,
        exclude_slash_tmp: bool,
    },
    /// Someone outside Troupe confines the process; Troupe adds no filesystem layer.
    ExternalSandbox { network_access: bool },
}

/// Whether the network is reachable from a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkPolicy {
    Restricted,
    Enabled,
}

/// Shape of the filesystem confinement, as the approval rule looks at it (a call in a
/// restricted sandbox may run without asking where an unrestricted one must ask).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileSystemSandboxKind {
    /// Writes limited to roots.
    Restricted,
    /// Writes anywhere (deny-read entries may still apply).
    Unrestricted,
    /// Enforced by someone else.
    External,
}

/// A directory a command may write, minus the subpaths kept read-only (`.git`, …).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WritableRoot {
    /// Absolute, canonical.
    pub root: PathBuf,
    /// Absolute paths under `root` that stay read-only.
    pub read_only_subpaths: Vec<PathBuf>,
}

/// Filesystem half of a managed profile; every path absolute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSystemPolicy {
    pub kind: FileSystemSandboxKind,
    /// Empty for read-only; ignored when `kind` is unrestricted.
    pub writable_roots: Vec<WritableRoot>,
    /// Masked (unreadable) for every managed kind.
    pub deny_read: Vec<PathBuf>,
    /// The entries of `deny_read` that are Troupe's own credential files: a backend that
    /// cannot mask (landlock) leaves them readable, as its warning says, instead of refusing
    /// every command; an escalation drops them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_keys: Vec<PathBuf>,
    /// Host Unix sockets (or directories of them) that stay reachable with the network off;
    /// every other pathname socket bound on the host is masked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_unix_sockets: Vec<PathBuf>,
}

/// The complete permissions one command runs under: who enforces, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PermissionProfile {
    /// Troupe enforces filesystem and network separately.
    Managed {
        file_system: FileSystemPolicy,
        network: NetworkPolicy,
    },
    /// No outer sandbox (`danger-full-access`).
    Disabled,
    /// Filesystem enforced by an outside sandbox; network as given.
    External { network: NetworkPolicy },
}

impl PermissionProfile {
    /// The filesystem kind the approval rule uses.
    pub fn file_system_kind(&self) -> FileSystemSandboxKind {
        match self {
            PermissionProfile::Managed { file_system, .. } => file_system.kind,
            PermissionProfile::Disabled => FileSystemSandboxKind::Unrestricted,
            PermissionProfile::External { .. } => FileSystemSandboxKind::External,
        }
    }

    /// Deny-read entries; they survive an escalation.
    pub fn deny_read(&self) -> &[PathBuf] {
        match self {
            PermissionProfile::Managed { file_system, .. } => &file_system.deny_read,
            PermissionProfile::Disabled | PermissionProfile::External { .. } => &[],
        }
    }
}

/// How the agent collaborates: carry the work out, or only plan it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollaborationMode {
    /// Investigate read-only and propose a plan; no changes, no automatic follow-up turns.
    Plan,
    /// Do the work.
    #[default]
    #[serde(
        alias = "code",
        alias = "pair_programming",
        alias = "execute",
        alias = "custom"
    )]
    Default,
}
