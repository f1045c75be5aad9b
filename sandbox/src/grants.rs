//! `request_permissions` grants against the sandbox: which requests can be granted at all
//! (checked before anyone is asked), and the profile a thread's grants widen to.
//!
//! A grant adds writable roots (with the same `.git`/`.troupe`/`$TROUPE_HOME` protection as
//! the configured ones) and turns the network on. It never lifts a deny-read entry, never
//! makes a protected path writable, and grants nothing when `requirements.toml` allows only
//! `read-only` (`SandboxSettings::grants_forbidden`).

use crate::profile::protected_subpaths;
use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_messages::permissions::{
    FileSystemPermissions, NetworkPermissions, PermissionGrants, RequestedPermissions,
};
use troupe_messages::policy::{
    FileSystemSandboxKind, NetworkPolicy, PermissionProfile, SandboxSettings, WritableRoot,
};

/// Why a request cannot be granted (the model reads it; nothing is granted).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum GrantError {
    #[error("request_permissions needs at least one permission: `file_system.read`, `file_system.write` or `network.enabled: true`")]
    Empty,
    #[error("requirements.toml allows only the read-only sandbox: no write or network access can be granted")]
    Forbidden,
    #[error("cannot grant write access to `{0}`: it does not exist or is not a directory (create it first)")]
    NotADirectory(PathBuf),
    #[error("cannot grant write access to `{0}`: it lies inside a protected path (`{1}`)")]
    Protected(PathBuf, PathBuf),
    #[error("cannot grant access to `{0}`: the active permission profile denies reading `{1}`; denied reads are policy restrictions no request lifts")]
    DenyRead(PathBuf, PathBuf),
    #[error("path `{0}` is empty or not valid")]
    BadPath(PathBuf),
}

/// Checks `request` for a thread whose cwd is `cwd`; relative paths resolve against `cwd`.
/// Returns the request with every path absolute (write paths canonical), as it is granted
/// and recorded. Touches the filesystem (canonicalises): call it off any actor handler.
pub fn check_request(
    request: &RequestedPermissions,
    settings: &SandboxSettings,
    cwd: &Path,
) -> Result<RequestedPermissions, GrantError> {
    if request.is_empty() {
        return Err(GrantError::Empty);
    }
    if settings.grants_forbidden && (request.wants_network() || !request.write_paths().is_empty()) {
        return Err(GrantError::Forbidden);
    }
    let deny_read: Vec<PathBuf> = settings
        .deny_read
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let protected: Vec<PathBuf> = settings
        .protected_paths
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let mut write = Vec::new();
    for path in request.write_paths() {
        let asked = absolute(path, cwd)?;
        let root = std::fs::canonicalize(&asked)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| GrantError::NotADirectory(asked.clone()))?;
        if let Some(p) = protected.iter().find(|p| root.starts_with(p)) {
            return Err(GrantError::Protected(root, p.clone()));
        }
        check_deny_read(&root, &deny_read)?;
        if !write.contains(&root) {
            write.push(root);
        }
    }
    let mut read = Vec::new();
    for path in request.read_paths() {
        let asked = absolute(path, cwd)?;
        let resolved = std::fs::canonicalize(&asked).unwrap_or(asked);
        check_deny_read(&resolved, &deny_read)?;
        if !read.contains(&resolved) {
            read.push(resolved);
        }
    }
    let file_system = (!write.is_empty() || !read.is_empty()).then(|| FileSystemPermissions {
        read: (!read.is_empty()).then_some(read),
        write: (!write.is_empty()).then_some(write),
    });
    let network = request.wants_network().then_some(NetworkPermissions {
        enabled: Some(true),
    });
    Ok(RequestedPermissions {
        network,
        file_system,
    })
}

/// A path touching a deny-read entry (inside it, or holding it) cannot be granted.
fn check_deny_read(path: &Path, deny_read: &[PathBuf]) -> Result<(), GrantError> {
    match deny_read
        .iter()
        .find(|d| path.starts_with(d) || d.starts_with(path))
    {
        Some(denied) => Err(GrantError::DenyRead(path.to_path_buf(), denied.clone())),
        None => Ok(()),
    }
}

fn absolute(path: &Path, cwd: &Path) -> Result<PathBuf, GrantError> {
    if path.as_os_str().is_empty() || path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(GrantError::BadPath(path.to_path_buf()));
    }
    Ok(if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    })
}

/// `profile` widened by `grants`: each granted directory becomes a writable root (its
/// `.git`/`.troupe` and protected paths kept read-only), and a network grant turns the
/// network on. Unconfined and external profiles are returned as they are.
pub fn widen(
    profile: PermissionProfile,
    grants: &PermissionGrants,
    settings: &SandboxSettings,
    cwd: &Path,
) -> PermissionProfile {
    if grants.is_empty() {
        return profile;
    }
    let (mut file_system, network) = match profile {
        PermissionProfile::Managed {
            file_system,
            network,
        } => (file_system, network),
        other => return other,
    };
    if file_system.kind == FileSystemSandboxKind::Restricted {
        let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let protected: Vec<PathBuf> = settings
            .protected_paths
            .iter()
            .filter(|p| p.is_absolute())
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        for root in &grants.write {
            // A root that vanished since the grant cannot be bound; it is skipped (the
            // command then cannot write there, which is the safe side).
            if !root.is_dir() || file_system.writable_roots.iter().any(|w| &w.root == root) {
                continue;
            }
            file_system.writable_roots.push(WritableRoot {
                root: root.clone(),
                read_only_subpaths: protected_subpaths(root, &cwd, &protected),
            });
        }
    }
    let network = if grants.network {
        NetworkPolicy::Enabled
    } else {
        network
    };
    PermissionProfile::Managed {
        file_system,
        network,
    }
}

/// Whether `profile` already allows everything `granted` asks (then nobody is asked).
pub fn already_allowed(profile: &PermissionProfile, granted: &RequestedPermissions) -> bool {
    match profile {
        PermissionProfile::Disabled => true,
        PermissionProfile::External { .. } => false,
        PermissionProfile::Managed {
            file_system,
            network,
        } => {
            let network_ok = !granted.wants_network() || *network == NetworkPolicy::Enabled;
            let writes_ok = file_system.kind == FileSystemSandboxKind::Unrestricted
                || granted.write_paths().iter().all(|path| {
                    file_system
                        .writable_roots
                        .iter()
                        .any(|w| path.starts_with(&w.root))
                });
            network_ok && writes_ok
        }
    }
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
