//! The blocking I/O of one rollout file, for the writer's workers: whole lines or nothing,
//! and a full disk noticed *before* it costs a line.
//!
//! - Space is reserved ahead of the end of the file (`fallocate` with `KEEP_SIZE`: the size
//!   does not change, the blocks are taken), so lines are written into space the filesystem
//!   already gave us. Each write round tops the reservation up to [`RESERVATION`] beyond its
//!   end (one cheap syscall); when that fails the disk is full: the file is marked *full* —
//!   the lines that still fit are written (the tool results of the batch that ran, the
//!   records of the turn stopping), every sync answers an error, and the session stops the
//!   turn before anything else runs. The reservation can grow inside pages the file already
//!   has, so each round also asks the filesystem (`fstatvfs`): less than [`LOW_SPACE`] free
//!   counts as full as well.
//! - A write that fails anyway (no reservation support, a line larger than what is left) is
//!   cut back to the last whole line (`ftruncate` to the length before it), and the failure
//!   sticks: a later line would leave a hole in the history.
//! - Closing gives the unused reservation back (punching it out).

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;

/// How much is reserved beyond the end of the file at a time.
pub const RESERVATION: u64 = 64 * 1024;

/// Below this much free space (for unprivileged writers) the disk counts as full.
pub const LOW_SPACE: u64 = RESERVATION;

/// A write round's failure description; ENOSPC / EDQUOT say "no space left".
pub fn describe(path: &Path, what: &str, err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            format!(
                "no space left on the device for {}: {what}: {err}",
                path.display()
            )
        }
        _ => format!("{what} {} failed: {err}", path.display()),
    }
}

pub struct FileIo {
    pub file: Option<File>,
    /// The first write error sticks: later lines would leave a hole, so none are written.
    pub failed: Option<String>,
    /// The disk is full: lines still go into the reservation, syncs answer this error.
    pub full: Option<String>,
    /// Length of the file (everything written so far).
    len: u64,
    /// End of the space reserved (≥ `len` while reserving works).
    reserved_to: u64,
    /// False once the filesystem said it cannot reserve.
    reserving: bool,
}

impl FileIo {
    pub fn new(file: File) -> Self {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        Self {
            file: Some(file),
            failed: None,
            full: None,
            len,
            reserved_to: len,
            reserving: true,
        }
    }

    /// The error a sync or a new write should report, if any.
    pub fn error(&self) -> Option<&String> {
        self.failed.as_ref().or(self.full.as_ref())
    }

    /// Writes `bytes` (whole lines) entirely or not at all. Returns a failure newly found
    /// (for the owner to be told at once).
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> Option<String> {
        if self.failed.is_some() || bytes.is_empty() {
            return None;
        }
        let file = self.file.as_mut()?;
        let mut newly = None;
        let end = self.len + bytes.len() as u64;
        if self.reserving && end + RESERVATION > self.reserved_to {
            match reserve(file, self.len, end - self.len + RESERVATION) {
                Ok(()) => self.reserved_to = end + RESERVATION,
                Err(err) if unsupported(&err) => self.reserving = false,
                Err(err) => {
                    // No room for the headroom: try for this write alone, and stop the turn.
                    let message = describe(path, "reserving space in", &err);
                    if reserve(file, self.len, end - self.len).is_ok() {
                        self.reserved_to = end;
                        if self.full.is_none() {
                            self.full = Some(message.clone());
                            newly = Some(message);
                        }
                    } else {
                        self.failed = Some(message.clone());
                        return Some(message);
                    }
                }
            }
        }
        // The reservation may grow inside pages the file already has, which proves nothing
        // about the disk: ask the filesystem how much is left too.
        if self.full.is_none() && newly.is_none() {
            if let Some(free) = available_bytes(file).filter(|free| *free < LOW_SPACE) {
                let message = format!(
                    "no space left on the device for {}: {free} bytes free",
                    path.display()
                );
                self.full = Some(message.clone());
                newly = Some(message);
            }
        }
        if let Err(err) = file.write_all(bytes) {
            // Whatever part of the lines made it is cut off: the file ends with a whole line.
            let _ = file.set_len(self.len);
            let message = describe(path, "writing", &err);
            tracing::error!(path = %path.display(), %err, "rollout write failed");
            self.failed = Some(message.clone());
            return Some(message);
        }
        self.len = end;
        newly
    }

    /// Fsyncs; the answer for the round's sync requests.
    pub fn sync(&mut self, path: &Path) -> Result<(), String> {
        let Some(file) = self.file.as_mut() else {
            return Err(format!("{} is already closed", path.display()));
        };
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        file.sync_data()
            .map_err(|err| describe(path, "fsync of", &err))?;
        match &self.full {
            Some(err) => Err(err.clone()),
            None => Ok(()),
        }
    }

    /// Gives the unused reservation back and closes the file.
    pub fn close(&mut self) {
        if let Some(file) = self.file.take() {
            if self.reserved_to > self.len {
                release(&file, self.len, self.reserved_to - self.len);
            }
        }
    }
}

fn reserve(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
    };
    // SAFETY: fallocate on a file descriptor we own; no memory is passed.
    let done = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, offset, len) };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Free bytes for unprivileged writers on the file's filesystem (`None` if unknown).
fn available_bytes(file: &File) -> Option<u64> {
    let stat = nix::sys::statvfs::fstatvfs(file).ok()?;
    // The field types differ between libc targets; on Linux both are u64.
    #[allow(clippy::useless_conversion)]
    let free = u64::from(stat.blocks_available()).saturating_mul(u64::from(stat.fragment_size()));
    Some(free)
}

fn release(file: &File, offset: u64, len: u64) {
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return;
    };
    // SAFETY: as in `reserve`; punching beyond the end of the file frees only the reservation.
    unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset,
            len,
        );
    }
}

/// Any failure to reserve other than "no space" (no support on this filesystem, a file not
/// open for writing): reserving stops, and the write itself says what is wrong.
fn unsupported(err: &std::io::Error) -> bool {
    !matches!(err.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}
