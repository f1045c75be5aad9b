//! What a command the sandbox refused was missing, read from its output: a write to a path
//! outside the writable roots (`Read-only file system` / `Permission denied` naming the
//! path), or the network while it is off. The retry then asks the user for exactly that one
//! addition instead of for no sandbox at all.
//!
//! Pure: nothing here touches the filesystem. The caller checks that the directory can be
//! granted (`grants::check_request`) before anyone is asked.

use crate::profile::is_protected_write;
use std::path::{Component, Path, PathBuf};
use troupe_messages::policy::{FileSystemSandboxKind, NetworkPolicy, PermissionProfile};

/// The one thing a retry would add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// Writing `path` was refused: `dir` (its parent) would become writable.
    Write { path: PathBuf, dir: PathBuf },
    /// The network is off and the command tried to reach it.
    Network,
}

/// Errors that mean a write was refused (EROFS, EACCES), lowercase.
const WRITE_REFUSALS: &[&str] = &["read-only file system", "permission denied"];

/// Errors that mean the network could not be reached, lowercase. With the network off the
/// command sees no interface but loopback, and non-Unix sockets are refused.
const NETWORK_FAILURES: &[&str] = &[
    "could not resolve host",
    "couldn't resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "no address associated with hostname",
    "network is unreachable",
    "failed to connect",
    "couldn't connect to server",
    "socket: operation not permitted",
    "getaddrinfo",
];

/// The first thing, in output order, that the command run under `profile` in `cwd` was
/// refused and a grant would add; `None` when nothing specific is recognised (or the
/// refused write lies in a path the profile keeps read-only on purpose, such as `.git`).
pub fn find(output: &str, profile: &PermissionProfile, cwd: &Path) -> Option<Missing> {
    let PermissionProfile::Managed {
        file_system,
        network,
    } = profile
    else {
        return None;
    };
    let confined_writes = file_system.kind == FileSystemSandboxKind::Restricted;
    let network_off = *network == NetworkPolicy::Restricted;
    for line in output.lines() {
        let lower = line.to_ascii_lowercase();
        if confined_writes && WRITE_REFUSALS.iter().any(|r| lower.contains(r)) {
            for path in paths_in(line).iter().map(|p| normalize(&cwd.join(p))) {
                let in_a_root = file_system
                    .writable_roots
                    .iter()
                    .find(|w| path.starts_with(&w.root));
                match in_a_root {
                    // Kept read-only on purpose: no directory grant is offered for it.
                    Some(root) if is_protected_write(root, &path) => return None,
                    // Writable already: the refusal was not the sandbox's.
                    Some(_) => continue,
                    None => {
                        if let Some(dir) = path.parent().map(Path::to_path_buf) {
                            return Some(Missing::Write { path, dir });
                        }
                    }
                }
            }
        }
        if network_off && NETWORK_FAILURES.iter().any(|f| lower.contains(f)) {
            return Some(Missing::Network);
        }
    }
    None
}

/// Paths a message line names, most likely first: quoted ones (`'…'`, `"…"`, `‘…’`,
/// `` `…' ``), the word just before `: <refusal>` (`sh: 1: cannot create out: Read-only
/// file system`), then words starting with `/`. Relative ones resolve against the cwd.
fn paths_in(line: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let mut push = |candidate: &str| {
        let candidate = candidate
            .trim_matches(['\'', '"', '‘', '’', '`'])
            .trim_end_matches([':', ',', ';']);
        if plausible(candidate) && !paths.iter().any(|p| p == candidate) {
            paths.push(candidate.to_string());
        }
    };
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            push(&after[..end]);
            rest = &after[end + close.len_utf8()..];
        }
    }
    // ASCII lowercase keeps byte offsets.
    let lower = line.to_ascii_lowercase();
    for refusal in WRITE_REFUSALS {
        if let Some(at) = lower.find(&format!(": {refusal}")) {
            if let Some(word) = line[..at].split_whitespace().last() {
                push(word);
            }
        }
    }
    for word in line.split_whitespace() {
        if word.starts_with('/') {
            push(word);
        }
    }
    paths
}

/// Whether `text` can be a file name in an error message (not `1` of `sh: 1:`, not prose).
fn plausible(text: &str) -> bool {
    !text.is_empty()
        && !text.contains(char::is_whitespace)
        && !text.chars().all(|c| c.is_ascii_digit())
        && !text.starts_with('[')
}

/// `path` with `.` and `..` resolved by name (the directory may not exist yet).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
#[path = "missing_tests.rs"]
mod tests;
