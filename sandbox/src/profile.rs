//! From settings to the [`PermissionProfile`] one command runs under, checked: every path
//! absolute, every writable root existing, `.git` under a writable root kept read-only.

use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_messages::policy::{
    FileSystemPolicy, FileSystemSandboxKind, NetworkPolicy, PermissionProfile, SandboxMode,
    SandboxSettings, WritableRoot,
};

/// Names kept read-only inside a writable root, whether they exist or not: git runs hooks
/// and `core.fsmonitor` from `.git`, Troupe obeys `.troupe`.
pub const PROTECTED_NAMES: &[&str] = &[".git", ".troupe"];

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
    let mut deny_read = settings
        .deny_read
        .iter()
        .map(|p| absolute(p).map(|p| std::fs::canonicalize(&p).unwrap_or(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let stored_keys = stored_keys(settings)?;
    for key in &stored_keys {
        if !deny_read.contains(key) {
            deny_read.push(key.clone());
        }
    }
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
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let protected_paths: Vec<PathBuf> = settings
        .protected_paths
        .iter()
        .filter(|p| p.is_absolute())
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let git_dirs = git_dirs_on_path(&cwd);
    let mut writable: Vec<WritableRoot> = Vec::new();
    for root in roots {
        let root = absolute(&root)?;
        let root = std::fs::canonicalize(&root).map_err(|_| ProfileError::MissingRoot(root))?;
        // A root inside a protected path (a workspace under `$TROUPE_HOME`) is not writable,
        // except the worktree a worktree thread runs in: its own checkout, nothing else of
        // the home. A root inside a git dir the cwd uses is not writable either.
        let root = match own_worktree(&root, &cwd, &protected_paths) {
            Some(worktree) => worktree,
            None if protected_paths.iter().any(|p| root.starts_with(p)) => continue,
            None => root,
        };
        if writable.iter().any(|w| w.root == root) || git_dirs.iter().any(|g| root.starts_with(g)) {
            continue;
        }
        let read_only_subpaths = protected_subpaths(&root, &cwd, &protected_paths);
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
            stored_keys,
            allow_unix_sockets: settings
                .allow_unix_sockets
                .iter()
                .map(|p| absolute(p))
                .collect::<Result<Vec<_>, _>>()?,
        },
        network,
    })
}

/// The credential files of the home, by the path the mount view sees (the home resolved,
/// whether or not the file exists yet).
fn stored_keys(settings: &SandboxSettings) -> Result<Vec<PathBuf>, ProfileError> {
    settings
        .stored_keys
        .iter()
        .map(|p| {
            let p = absolute(p)?;
            Ok(match (p.parent(), p.file_name()) {
                (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                    .map(|dir| dir.join(name))
                    .unwrap_or(p),
                _ => p,
            })
        })
        .collect()
}

fn absolute(path: &Path) -> Result<PathBuf, ProfileError> {
    if path.is_absolute() {
        Ok(path.to_path_buf())
    } else {
        Err(ProfileError::Relative(path.to_path_buf()))
    }
}

/// The worktree a worktree thread runs in, when `root` is its cwd: `<protected>/worktrees/
/// <name>` holding `cwd`, a linked checkout (its `.git` a file). Troupe made it, and only
/// Troupe sets a thread's cwd there; its `.git` file and the git dirs it points to stay
/// read-only (see [`protected_subpaths`]).
fn own_worktree(root: &Path, cwd: &Path, protected_paths: &[PathBuf]) -> Option<PathBuf> {
    if root != cwd {
        return None;
    }
    protected_paths.iter().find_map(|home| {
        let rest = cwd.strip_prefix(home.join("worktrees")).ok()?;
        let name = rest.components().next()?;
        let top = home.join("worktrees").join(name);
        let is_linked = top.join(".git").symlink_metadata().ok()?.is_file();
        is_linked.then_some(top)
    })
}

/// The git dirs git would use from `cwd` or any directory above it: for every `.git` file
/// or symlink on the way up, where it points and that dir's `commondir` (a linked
/// worktree's or a submodule's shared repository: config, hooks, refs), and the `commondir`
/// of every `.git` directory that has one.
pub fn git_dirs_on_path(cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        for target in git_dir_targets(&dir.join(".git")) {
            push_unique(&mut out, target);
        }
    }
    out
}

/// Where the `.git` at `dot_git` leads besides itself: the target of a link or `gitdir:`
/// file, and the `commondir` of the git dir (relative to that git dir, or absolute).
fn git_dir_targets(dot_git: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let target = link_or_gitdir_target(dot_git);
    let git_dir = match &target {
        Some(target) => target.clone(),
        None => dot_git.to_path_buf(),
    };
    out.extend(target);
    if let Ok(text) = std::fs::read_to_string(git_dir.join("commondir")) {
        let common = text.lines().next().unwrap_or("").trim_end_matches('\r');
        if !common.is_empty() {
            if let Ok(common) = std::fs::canonicalize(git_dir.join(common)) {
                if common != dot_git {
                    out.push(common);
                }
            }
        }
    }
    out
}

/// The read-only subpaths of `root`: `.git` and `.troupe` in the root and in every directory
/// from it down to `cwd` (git and Troupe look for them in each), existing or not — the
/// helper covers a missing one with a placeholder, a symlinked one at the link *and* its
/// target; the target of a `gitdir:` file and the `commondir` of a git dir, for those and
/// for every `.git` above `cwd` (a worktree thread's repository may lie under any root);
/// and each protected path (`$TROUPE_HOME`) that lies inside the root, or holds it.
pub fn protected_subpaths(root: &Path, cwd: &Path, protected_paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut levels = vec![root.to_path_buf()];
    if cwd.starts_with(root) {
        levels.extend(
            cwd.ancestors()
                .take_while(|dir| *dir != root && dir.starts_with(root))
                .map(Path::to_path_buf),
        );
    }
    let mut out = Vec::new();
    for dir in levels {
        for name in PROTECTED_NAMES {
            let path = dir.join(name);
            if *name == ".git" {
                for target in git_dir_targets(&path) {
                    push_unique(&mut out, target);
                }
            } else if let Some(target) = link_or_gitdir_target(&path) {
                push_unique(&mut out, target);
            }
            push_unique(&mut out, path);
        }
    }
    for git_dir in git_dirs_on_path(cwd) {
        if git_dir.starts_with(root) {
            push_unique(&mut out, git_dir);
        }
    }
    for path in protected_paths {
        if path.starts_with(root) || root.starts_with(path) {
            push_unique(&mut out, path.clone());
        }
    }
    out
}

/// Where a symlinked `.git`/`.troupe` points, or the `gitdir:` of a `.git` file (worktrees,
/// submodules): that directory holds the config and hooks, so it is protected too.
fn link_or_gitdir_target(path: &Path) -> Option<PathBuf> {
    let meta = path.symlink_metadata().ok()?;
    let target = if meta.file_type().is_symlink() {
        // A dangling link's target is protected too (the helper puts a placeholder there),
        // or a command could create it and the link would lead the user's git into it.
        std::fs::canonicalize(path).ok().or_else(|| {
            let target = path.parent()?.join(std::fs::read_link(path).ok()?);
            Some(
                std::fs::canonicalize(target.parent()?)
                    .ok()?
                    .join(target.file_name()?),
            )
        })?
    } else if meta.is_file() && path.file_name()? == ".git" {
        let text = std::fs::read_to_string(path).ok()?;
        let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        std::fs::canonicalize(path.parent()?.join(gitdir)).ok()?
    } else {
        return None;
    };
    Some(target)
}

fn push_unique(out: &mut Vec<PathBuf>, path: PathBuf) {
    if !out.contains(&path) {
        out.push(path);
    }
}

/// Whether a write to `file` (absolute, canonical parents) lands in a protected place of a
/// writable root: a `.git` or `.troupe` component at any depth below `root`, or one of
/// `read_only_subpaths`. For in-process writers (patches), which no mount confines.
pub fn is_protected_write(root: &WritableRoot, file: &Path) -> bool {
    if root
        .read_only_subpaths
        .iter()
        .any(|ro| file.starts_with(ro))
    {
        return true;
    }
    file.strip_prefix(&root.root).is_ok_and(|rest| {
        rest.components()
            .any(|c| PROTECTED_NAMES.iter().any(|name| c.as_os_str() == *name))
    })
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
    // The approved command runs as the user would run it: Troupe's own key files are not
    // hidden from it (the user's deny-read entries are).
    let stored_keys = match profile {
        PermissionProfile::Managed { file_system, .. } => file_system.stored_keys.as_slice(),
        _ => &[],
    };
    let deny_read: Vec<PathBuf> = profile
        .deny_read()
        .iter()
        .filter(|p| !stored_keys.contains(p))
        .cloned()
        .collect();
    if deny_read.is_empty() {
        return PermissionProfile::Disabled;
    }
    PermissionProfile::Managed {
        file_system: FileSystemPolicy {
            kind: FileSystemSandboxKind::Unrestricted,
            writable_roots: Vec::new(),
            deny_read,
            stored_keys: Vec::new(),
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
