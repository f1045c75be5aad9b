//! One writer per rollout: `<rollout>.lock` holds the pid of the process appending to it.
//!
//! A lock whose pid is no longer alive (the process was killed) is taken over; a live one is
//! an error naming the pid. The lock file is removed when the recorder stops.

use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum LockError {
    #[error("{path} is in use by process {pid}; close that troupe first (a stale lock from a dead process is taken over automatically)")]
    Held { path: PathBuf, pid: u32 },
    #[error("cannot lock {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A held lock; released on drop.
#[derive(Debug)]
pub struct RolloutLock {
    path: PathBuf,
}

/// The lock file of a rollout.
pub fn lock_path(rollout: &Path) -> PathBuf {
    let mut name = rollout.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// The pid holding the rollout's lock, when a live process holds it.
pub fn holder(rollout: &Path) -> Option<u32> {
    let text = troupe_config::regular_file::read_to_string(&lock_path(rollout)).ok()?;
    let pid: u32 = text.trim().parse().ok()?;
    (pid != std::process::id() && alive(pid)).then_some(pid)
}

/// Whether process `pid` exists (ours or another user's).
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None) {
        Ok(()) => true,
        // It exists but belongs to someone else.
        Err(nix::errno::Errno::EPERM) => true,
        Err(_) => false,
    }
}

impl RolloutLock {
    /// Takes the lock of `rollout` for this process.
    pub fn acquire(rollout: &Path) -> Result<Self, LockError> {
        let path = lock_path(rollout);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let me = std::process::id();
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                if let Err(err) = file.write_all(me.to_string().as_bytes()) {
                    // An empty lock file would block nobody and mislead everyone.
                    drop(file);
                    let _ = std::fs::remove_file(&path);
                    return Err(io(err));
                }
                return Ok(Self { path });
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(io(err)),
        }
        if let Some(pid) = holder(rollout) {
            return Err(LockError::Held {
                path: rollout.to_path_buf(),
                pid,
            });
        }
        // Stale: replace it atomically, then check we are the one who won.
        let tmp = path.with_extension(format!("lock.{me}"));
        if let Err(err) = std::fs::write(&tmp, me.to_string()) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(err));
        }
        std::fs::rename(&tmp, &path).map_err(io)?;
        let text = troupe_config::regular_file::read_to_string(&path).map_err(io)?;
        match text.trim().parse::<u32>() {
            Ok(pid) if pid == me => Ok(Self { path }),
            Ok(pid) => Err(LockError::Held {
                path: rollout.to_path_buf(),
                pid,
            }),
            Err(_) => Err(LockError::Held {
                path: rollout.to_path_buf(),
                pid: 0,
            }),
        }
    }
}

impl Drop for RolloutLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
#[path = "lock_tests.rs"]
mod tests;
