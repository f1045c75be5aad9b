//! Opening a file that must be a regular file — config, AGENTS.md, a rollout — without ever
//! blocking on something else put in its place: a FIFO would block `open` until a writer
//! comes (forever), a device could be read without end.
//!
//! The file is opened with `O_NONBLOCK` (so opening a FIFO returns at once), its type is
//! checked on the open descriptor (`fstat`: no window between a check and the open for a
//! swap), and only then is it switched back to blocking reads.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for reading if it is a regular file (symlinks to one are followed); anything
/// else is an `InvalidInput` error saying what it is. The caller names the path.
pub fn open(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({what})"),
        ));
    }
    set_blocking(&file)?;
    Ok(file)
}

/// The whole file, if it is a regular one.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut data = Vec::new();
    file.read_to_end(&mut data)?;
    Ok(data)
}

/// The whole file as UTF-8, if it is a regular one.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let mut file = open(path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

fn set_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
#[path = "regular_file_tests.rs"]
mod tests;
