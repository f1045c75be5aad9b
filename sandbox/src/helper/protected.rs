//! Read-only subpaths of writable roots (`.git`, `.troupe`, `$TROUPE_HOME`) in the mount
//! view, including the two shapes a plain read-only bind misses:
//! - a name that does not exist yet: a bind needs something to mount on, so the helper first
//!   creates an empty placeholder directory on the host (mode 0700, as Codex materialises
//!   missing protected paths) and binds it read-only; a sandboxed command then cannot create,
//!   remove or rename it (a mount point). Each sandbox using a placeholder holds a shared
//!   `flock` on it; the cleaner of whichever ends last removes it, so nothing stays behind.
//! - a symlink: a bind follows the link (the target is protected as its own subpath) and
//!   would leave the link itself replaceable. The link is covered by a read-only file
//!   mounted on the link itself (new mount API, which does not follow it): for `.git` a
//!   `gitdir: <target>` file, so git inside the sandbox still finds the repository.

use super::mounts::{bind, fail, remount_read_only};
use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

type R = Result<(), String>;

/// Mode of a placeholder. Only an empty directory of this mode is ever removed, so at worst
/// a user's own empty `.git`/`.troupe` goes (project-root detection skips them too).
const PLACEHOLDER_MODE: u32 = troupe_config::layers::SANDBOX_PLACEHOLDER_MODE;

/// A placeholder this process uses: its path and a locked descriptor of it.
pub(super) struct Placeholder {
    path: PathBuf,
    dir: File,
}

/// Creates or joins a placeholder for every missing subpath whose parent exists (`.git`,
/// `.troupe`, the target of a dangling `.git` link). Runs on the host before the namespaces
/// exist. Where the user may not create the name (no parent, no permission, read-only
/// filesystem) the sandboxed command may not either, so it is skipped; any other failure
/// fails the setup rather than leave the name creatable.
pub(super) fn create_placeholders(subpaths: &[PathBuf]) -> Result<Vec<Placeholder>, String> {
    let mut held = Vec::new();
    for path in subpaths {
        // Missing, or another sandbox's placeholder: joined (locked), or its cleaner would
        // remove it under this sandbox's mount.
        if path.symlink_metadata().map_or(true, |m| is_placeholder(&m)) {
            held.extend(join_or_create(path)?);
        }
    }
    Ok(held)
}

fn join_or_create(path: &Path) -> Result<Option<Placeholder>, String> {
    use std::io::ErrorKind;
    let failed = |what: &str, err: std::io::Error| fail(what, path, err);
    // A few rounds: another run may remove the placeholder between our mkdir and our lock.
    for _ in 0..8 {
        match std::fs::DirBuilder::new()
            .mode(PLACEHOLDER_MODE)
            .create(path)
        {
            Ok(()) => {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(PLACEHOLDER_MODE))
                    .map_err(|e| failed("cannot set the mode of placeholder", e))?;
            }
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
            Err(err)
                if matches!(
                    err.kind(),
                    ErrorKind::NotFound
                        | ErrorKind::PermissionDenied
                        | ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                return Ok(None);
            }
            Err(err) => return Err(failed("cannot create placeholder", err)),
        }
        let Ok(meta) = path.symlink_metadata() else {
            continue; // removed by another run's cleaner meanwhile
        };
        if !is_placeholder(&meta) {
            // Something real is there now (the user created it): protected as it is.
            return Ok(None);
        }
        let dir = match open_dir(path) {
            Ok(dir) => dir,
            Err(err) if err.kind() == ErrorKind::NotFound => continue,
            Err(err) => return Err(failed("cannot open placeholder", err)),
        };
        if !lock(&dir, libc::LOCK_SH) {
            return Err(failed(
                "cannot lock placeholder",
                std::io::Error::last_os_error(),
            ));
        }
        // Still the same directory at the path once locked, or a remover got there first.
        match (path.symlink_metadata(), dir.metadata()) {
            (Ok(now), Ok(locked)) if now.ino() == locked.ino() && now.dev() == locked.dev() => {
                return Ok(Some(Placeholder {
                    path: path.to_path_buf(),
                    dir,
                }));
            }
            _ => continue,
        }
    }
    Err(format!(
        "placeholder {} kept being replaced while the sandbox was set up",
        path.display()
    ))
}

fn lock(dir: &File, how: i32) -> bool {
    // SAFETY: flock on a descriptor we own.
    unsafe { libc::flock(dir.as_raw_fd(), how) == 0 }
}

fn is_placeholder(meta: &std::fs::Metadata) -> bool {
    meta.is_dir() && meta.mode() & 0o7777 == PLACEHOLDER_MODE
}

fn open_dir(path: &Path) -> std::io::Result<File> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a plain open of a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c_path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Starts the process that removes the placeholders once this sandbox is gone: forked
/// before the namespaces exist (so it sees the host's mounts), in its own session (a kill
/// of the command's process group spares it), holding every other descriptor closed. It
/// waits for end-of-file on a pipe whose write end only the helper and its namespace
/// children hold (close-on-exec: commands never get it), so it wakes however they end —
/// the runtime SIGKILLs a zygote it drops. Then it removes each placeholder no other
/// sandbox still holds (a shared lock each) that is still empty.
pub(super) fn spawn_cleaner(placeholders: Vec<Placeholder>) -> Result<(), String> {
    if placeholders.is_empty() {
        return Ok(());
    }
    let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| format!("pipe for the placeholder cleaner: {e}"))?;
    // SAFETY: the helper is single-threaded here (before any namespace or thread).
    match unsafe { nix::unistd::fork() }.map_err(|e| format!("fork: {e}"))? {
        nix::unistd::ForkResult::Child => {
            drop(write_end);
            let _ = nix::unistd::setsid();
            // Named, so that a frontend's final sweep lets it finish (`descendants`).
            let name = std::ffi::CString::new(crate::descendants::CLEANER_NAME).unwrap_or_default();
            // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
            unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
            let mut keep: Vec<RawFd> = placeholders.iter().map(|p| p.dir.as_raw_fd()).collect();
            keep.push(read_end.as_raw_fd());
            close_all_but(&mut keep);
            let mut byte = [0u8; 1];
            // End-of-file: every holder of the write end is gone.
            loop {
                match nix::unistd::read(read_end.as_raw_fd(), &mut byte) {
                    Ok(0) => break,
                    Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                    Err(_) => break,
                }
            }
            remove_unused(placeholders);
            // SAFETY: leaving the forked cleaner without running the helper's exit path.
            unsafe { libc::_exit(0) }
        }
        nix::unistd::ForkResult::Parent { .. } => {
            drop(read_end);
            // Kept open for the rest of this process (and its namespace children).
            std::mem::forget(write_end);
            Ok(())
        }
    }
}

fn close_all_but(keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut next: u32 = 0;
    for fd in keep.iter().map(|fd| *fd as u32) {
        if fd > next {
            // SAFETY: closing descriptors of this (forked, single-threaded) process.
            unsafe { libc::syscall(libc::SYS_close_range, next, fd - 1, 0u32) };
        }
        next = fd + 1;
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, next, u32::MAX, 0u32) };
}

fn remove_unused(placeholders: Vec<Placeholder>) {
    for Placeholder { path, dir } in placeholders {
        if !lock(&dir, libc::LOCK_EX | libc::LOCK_NB) {
            continue; // another sandbox still uses it; its cleaner removes it
        }
        let same = match (path.symlink_metadata(), dir.metadata()) {
            (Ok(now), Ok(held)) => {
                now.ino() == held.ino() && now.dev() == held.dev() && is_placeholder(&now)
            }
            _ => false,
        };
        if same {
            // From the host's mount namespace even while the sandbox's is still being torn
            // down; fails (and keeps it) when the user put something inside meanwhile.
            let _ = std::fs::remove_dir(&path);
        }
    }
}

/// In the new mount namespace: makes `path` read-only, whatever it is.
pub(super) fn protect(path: &Path) -> R {
    let Ok(meta) = path.symlink_metadata() else {
        // Missing and no placeholder could be made: the command cannot create it either
        // (see `create_placeholders`), or it is a protected path Troupe creates at start.
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        return cover_link(path);
    }
    bind(path, path)?;
    remount_read_only(path)
}

/// Mounts a read-only file over the symlink `link` itself.
fn cover_link(link: &Path) -> R {
    let content = match std::fs::canonicalize(link) {
        Ok(target) if link.file_name().is_some_and(|n| n == ".git") => {
            format!("gitdir: {}\n", target.display())
        }
        _ => String::new(),
    };
    let err = |what: &str| fail(what, link, std::io::Error::last_os_error());
    // A detached tmpfs holding the one file.
    let fs = owned(sys_fsopen(), || err("cannot create a tmpfs for"))?;
    // SAFETY: fsconfig on our fs context; a create command takes no key or value.
    if unsafe { libc::syscall(libc::SYS_fsconfig, fs.as_raw_fd(), 6, 0usize, 0usize, 0) } != 0 {
        return Err(err("cannot create a tmpfs for"));
    }
    // SAFETY: fsmount of the context just created (FSMOUNT_CLOEXEC).
    let mnt = owned(
        unsafe { libc::syscall(libc::SYS_fsmount, fs.as_raw_fd(), 1, 0) } as RawFd,
        || err("cannot mount a tmpfs for"),
    )?;
    let name = c"cover";
    // SAFETY: openat relative to our detached mount's root.
    let file = owned(
        unsafe {
            libc::openat(
                mnt.as_raw_fd(),
                name.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o444,
            )
        },
        || err("cannot create the cover file for"),
    )?;
    File::from(file)
        .write_all(content.as_bytes())
        .map_err(|e| fail("cannot write the cover file for", link, e))?;
    // SAFETY: open_tree(OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC) of the file in our mount.
    let tree = owned(
        unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                mnt.as_raw_fd(),
                name.as_ptr(),
                1 | libc::O_CLOEXEC,
            )
        } as RawFd,
        || err("cannot clone the cover file for"),
    )?;
    let target = CString::new(link.as_os_str().as_bytes())
        .map_err(|_| format!("{} contains a NUL byte", link.display()))?;
    // SAFETY: move_mount(MOVE_MOUNT_F_EMPTY_PATH) without MOVE_MOUNT_T_SYMLINKS: the target
    // path's last component (the link) is not followed, so the file is mounted on the link.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            4,
        )
    };
    if rc != 0 {
        return Err(err("cannot cover the symlink"));
    }
    // The path now resolves to the mounted file (mounts are crossed before links).
    remount_read_only(link)
}

fn sys_fsopen() -> RawFd {
    // SAFETY: fsopen("tmpfs", FSOPEN_CLOEXEC).
    unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), 1) as RawFd }
}

fn owned(fd: RawFd, on_error: impl FnOnce() -> String) -> Result<OwnedFd, String> {
    if fd < 0 {
        return Err(on_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
