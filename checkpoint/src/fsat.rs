//! Every access to a root goes through here: beneath an open descriptor of the root, with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, so no symlink
//! (planted before or during a restore) and no `..` can take an access out of the root; a
//! final component that is a symlink is acted on as a link (`unlinkat`, `renameat`), never
//! followed.

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::Mode;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

/// Opens the root itself: it must be a directory, reached without any symlink.
pub fn open_root(root: &Path) -> Result<OwnedFd, Errno> {
    let how = OpenHow::new()
        .flags(OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    let fd = nix::fcntl::openat2(libc::AT_FDCWD, root, how)?;
    // SAFETY: `openat2` returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `rel` beneath `dir`; `rel` empty opens `dir` again.
pub fn open_beneath(dir: &OwnedFd, rel: &str, flags: OFlag, mode: u32) -> Result<OwnedFd, Errno> {
    let rel = if rel.is_empty() { "." } else { rel };
    let how = OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC | OFlag::O_NOCTTY)
        .mode(Mode::from_bits_truncate(mode))
        .resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_MAGICLINKS,
        );
    let fd = nix::fcntl::openat2(dir.as_raw_fd(), rel, how)?;
    // SAFETY: `openat2` returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The directory holding `rel` (opened beneath the root) and `rel`'s last component.
pub fn open_parent<'a>(root: &OwnedFd, rel: &'a str) -> Result<(OwnedFd, &'a str), Errno> {
    let (parent, name) = match rel.rsplit_once('/') {
        Some((parent, name)) => (parent, name),
        None => ("", rel),
    };
    if name.is_empty() || name == "." || name == ".." {
        return Err(Errno::EINVAL);
    }
    let dir = open_beneath(root, parent, OFlag::O_DIRECTORY | OFlag::O_RDONLY, 0)?;
    Ok((dir, name))
}

/// Opens a regular file beneath the root for reading; anything else is an error.
pub fn open_file(root: &OwnedFd, rel: &str) -> Result<std::fs::File, Errno> {
    let fd = open_beneath(root, rel, OFlag::O_RDONLY | OFlag::O_NONBLOCK, 0)?;
    let stat = nix::sys::stat::fstat(fd.as_raw_fd())?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(Errno::EINVAL);
    }
    Ok(std::fs::File::from(fd))
}

/// A name nobody else uses, for a file written then renamed into place.
pub fn temp_name() -> String {
    format!(".troupe-rewind-{:016x}", rand::random::<u64>())
}
