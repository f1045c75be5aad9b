//! From settings to the [`PermissionProfile`] one command runs under, checked: every path
//! absolute, every writable root existing, `.git` under a writable root kept read-only.

use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_messages::policy::{
    FileSystemPolicy, FileSystemSandboxKind, NetworkPolicy, PermissionProfile, SandboxMode,
    SandboxSettings, WritableRoot,
};

/// Subdirectories of a writable root that stay read-only (hooks and config run code later).
const PROTECTED_SUBPATHS: &[&str] = &[".git", ".troupe"];

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ProfileError {
    #[error("sandbox path `{0}` is relative; give an absolute path (writable roots and deny-read entries must be absolute)")]
    Relative(PathBuf),
    #[error("writable root `{0}` does not exist; create it or remove it from sandbox_workspace_write.writable_roots")]
    MissingRoot(PathBuf),
}

/// The profile for `mode` with these settings, for a command whose workspace is `cwd`.
pub fn resolve_profile(
    mode: SandboxMode,
    settings: &SandboxSettings,
    cwd: &Path,
) -> Result<PermissionProfile, ProfileError> {
    let deny_read = settings
        .deny_read
        .iter()
        .map(|p| absolute(p).map(|p| std::fs::canonicalize(&p).unwrap_or(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let (roots, network) = match mode {
        SandboxMode::DangerFullAccess => return Ok(PermissionProfile::Disabled),
        SandboxMode::ReadOnly => (Vec::new(), NetworkPolicy::Restricted),
        SandboxMode::WorkspaceWrite => {
            let mut roots = vec![cwd.to_path_buf()];
            roots.extend(settings.writable_roots.iter().cloned());
            if !settings.exclude_tmpdir_env_var {
                if let Some(tmp) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
                    roots.push(PathBuf::from(tmp));
                }
            }
            if !settings.exclude_slash_tmp && Path::new("/tmp").is_dir() {
                roots.push(PathBuf::from("/tmp"));
            }
            let network = if settings.network_access {
                NetworkPolicy::Enabled
            } else {
                NetworkPolicy::Restricted
            };
            (roots, network)
        }
    };
    let mut writable: Vec<WritableRoot> = Vec::new();
    for root in roots {
        let root = absolute(&root)?;
        let root = std::fs::canonicalize(&root).map_err(|_| ProfileError::MissingRoot(root))?;
        if writable.iter().any(|w| w.root == root) {
            continue;
        }
        let read_only_subpaths = PROTECTED_SUBPATHS
            .iter()
            .map(|name| root.join(name))
            .filter(|p| p.symlink_metadata().is_ok())
            .collect();
        writable.push(WritableRoot {
            root,
            read_only_subpaths,
        });
    }
    Ok(PermissionProfile::Managed {
        file_system: FileSystemPolicy {
            kind: FileSystemSandboxKind::Restricted,
            writable_roots: writable,
            deny_read,
            allow_unix_sockets: settings
                .allow_unix_sockets
                .iter()
                .map(|p| absolute(p))
                .collect::<Result<Vec<_>, _>>()?,
        },
        network,
    })
}

fn absolute(path: &Path) -> Result<PathBuf, ProfileError> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Err(ProfileError::Relative(path.to_path_buf()))
    }
}

/// Checks a profile that arrived from outside (the wire, the helper's argument): every path
/// must be absolute, or a bind or mask could land somewhere other than intended.
pub fn validate(profile: &PermissionProfile) -> Result<(), ProfileError> {
    let PermissionProfile::Managed { file_system, .. } = profile else {
        return Ok(());
    };
    let paths = file_system
        .writable_roots
        .iter()
        .flat_map(|w| std::iter::once(&w.root).chain(w.read_only_subpaths.iter()))
        .chain(file_system.deny_read.iter());
    for path in paths {
        absolute(path)?;
    }
    Ok(())
}

/// The profile of an approved escalation: unconfined, except that deny-read entries survive
/// (then the command still runs in the namespace sandbox, writing anywhere, network on).
pub fn escalated(profile: &PermissionProfile) -> PermissionProfile {
    let deny_read = profile.deny_read().to_vec();
    if deny_read.is_empty() {
        return PermissionProfile::Disabled;
    }
    PermissionProfile::Managed {
        file_system: FileSystemPolicy {
            kind: FileSystemSandboxKind::Unrestricted,
            writable_roots: Vec::new(),
            deny_read,
            // The network is on: sockets are not masked.
            allow_unix_sockets: Vec::new(),
        },
        network: NetworkPolicy::Enabled,
    }
}

/// Output fragments that mean "the sandbox said no" rather than "the command failed".
const DENIAL_PATTERNS: &[&str] = &[
    "operation not permitted",
    "permission denied",
    "read-only file system",
    "network is unreachable",
    "bad system call",
    "temporary failure in name resolution",
    "could not resolve host",
    "failed to connect",
];

/// Whether a failed sandboxed run looks like a sandbox denial (exit status + known errors).
pub fn is_likely_sandbox_denial(exit_code: Option<i32>, output: &str) -> bool {
    match exit_code {
        Some(0) | None => false,
        // SIGSYS from a seccomp kill.
        Some(159) => true,
        Some(_) => {
            let lower = output.to_ascii_lowercase();
            DENIAL_PATTERNS.iter().any(|p| lower.contains(p))
        }
    }
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
