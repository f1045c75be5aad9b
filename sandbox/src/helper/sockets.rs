//! With the network off, the host's pathname Unix sockets (docker.sock, the D-Bus buses,
//! ssh-agent, X11, …) are unreachable: connecting to one is not "network" for the network
//! namespace or seccomp (AF_UNIX stays allowed for the command's own sockets), and Landlock
//! (ABI ≤ 7) has no right for it. So each socket bound on the host at the time the view is
//! built gets `/dev/null` bound over it (connect: `ECONNREFUSED`), except the ones the user
//! allows (`[sandbox_workspace_write] allow_unix_sockets`).
//!
//! The list comes from the host network namespace's `/proc/net/unix`, opened before the
//! helper leaves it; the zygote keeps that file open and re-reads it before every spawn, so a
//! socket bound later makes the view stale (a fresh zygote masks it too). Sockets inside the
//! writable roots are masked as well: `/tmp/.X11-unix/X0` or an ssh-agent under `/tmp` are
//! as dangerous as docker.sock.

use nix::mount::{mount, MsFlags};
use std::collections::BTreeSet;
use std::io::{Read, Seek};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The host's socket table, opened in the host network namespace.
pub(super) struct HostSockets {
    table: std::fs::File,
    allowed: Vec<PathBuf>,
}

impl HostSockets {
    /// Opens the table; call before `unshare(CLONE_NEWNET)`.
    pub(super) fn open(allowed: &[PathBuf]) -> Result<Self, String> {
        let table = std::fs::File::open("/proc/self/net/unix")
            .map_err(|e| format!("reading the host's Unix sockets (/proc/self/net/unix): {e}"))?;
        Ok(Self {
            table,
            allowed: allowed.to_vec(),
        })
    }

    /// Every bound pathname socket not allowed, as the host has them now.
    pub(super) fn sockets_to_mask(&mut self) -> Result<BTreeSet<PathBuf>, String> {
        let mut text = String::new();
        self.table
            .rewind()
            .and_then(|_| self.table.read_to_string(&mut text))
            .map_err(|e| format!("reading the host's Unix sockets: {e}"))?;
        Ok(bound_paths(&text)
            .into_iter()
            .filter(|path| !self.allowed.iter().any(|allowed| path.starts_with(allowed)))
            .collect())
    }
}

/// Pathname sockets of a `/proc/net/unix` table (abstract ones start with `@`; unbound
/// sockets have no path). A path with spaces cannot be told apart from the columns and is
/// taken from the eighth column on.
pub(super) fn bound_paths(table: &str) -> BTreeSet<PathBuf> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            let path = columns.get(7..)?.join(" ");
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// Binds `/dev/null` over every socket in `paths` that still is one. Run after the mount
/// view is built (its `/dev/null`). A path gone, or in a directory we cannot enter, needs
/// no mask (nothing here can connect to it either).
pub(super) fn mask(paths: &BTreeSet<PathBuf>) -> Result<(), String> {
    for path in paths {
        let is_socket =
            std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_socket());
        if !is_socket {
            continue;
        }
        match mount(
            Some(Path::new("/dev/null")),
            path,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        ) {
            Ok(()) => {}
            Err(nix::errno::Errno::ENOENT | nix::errno::Errno::EACCES) => {}
            Err(e) => return Err(format!("cannot mask the socket {}: {e}", path.display())),
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "sockets_tests.rs"]
mod tests;
