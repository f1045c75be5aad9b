//! The mount namespace of the `linux` backend, built in place: every mount read-only, the
//! writable roots bound writable over themselves, protected subpaths (`.git`, `.troupe`,
//! see `protected.rs`) read-only again, deny-read paths masked, a fresh `/proc`, a minimal `/dev`.
//!
//! Runs in the sandboxed child after `unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID…)`, where
//! we hold all capabilities over the new namespaces and none outside them.

use nix::mount::{mount, MsFlags};
use nix::sys::statvfs::{statvfs, FsFlags};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use troupe_messages::policy::WritableRoot;

type R = Result<(), String>;

pub(super) fn fail(what: &str, path: &Path, err: impl std::fmt::Display) -> String {
    format!("{what} {}: {err}", path.display())
}

/// Flags that a remount inside a user namespace must keep (the kernel locks them).
fn kept_flags(path: &Path) -> MsFlags {
    let mut flags = MsFlags::empty();
    if let Ok(stat) = statvfs(path) {
        let f = stat.flags();
        for (fs, ms) in [
            (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
            (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
            (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
            (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
            (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
            (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
        ] {
            if f.contains(fs) {
                flags |= ms;
            }
        }
    }
    flags
}

pub(super) fn remount_read_only(path: &Path) -> R {
    let flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | kept_flags(path);
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>)
        .map_err(|e| fail("cannot make read-only", path, e))
}

pub(super) fn bind(source: &Path, target: &Path) -> R {
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|e| fail("cannot bind", target, e))
}

/// Mount points of this namespace, parents first (mountinfo order), octal escapes decoded.
fn mount_points() -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("reading /proc/self/mountinfo: {e}"))?;
    Ok(text
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|raw| PathBuf::from(unescape(raw)))
        .collect())
}

fn unescape(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let digits = std::str::from_utf8(&bytes[i + 1..i + 4]).unwrap_or("x");
            if let Ok(v) = u8::from_str_radix(digits, 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Host device nodes opened before `/dev` is replaced, to bind into the new one.
pub struct HostDevices(Vec<(&'static str, OwnedFd)>);

const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

impl HostDevices {
    pub fn open() -> Self {
        let mut found = Vec::new();
        for name in DEVICES {
            let path = format!("/dev/{name}");
            if let Ok(fd) = nix::fcntl::open(
                path.as_str(),
                nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            ) {
                // SAFETY: `open` returned a fresh descriptor that nothing else owns.
                found.push((*name, unsafe {
                    <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd)
                }));
            }
        }
        Self(found)
    }
}

/// Builds the whole filesystem view. `writable` empty = read-only; a root of `/` means
/// "write anywhere" (an escalation that must still keep deny-read masks).
pub fn build(writable: &[WritableRoot], deny_read: &[PathBuf], devices: &HostDevices) -> R {
    let root = Path::new("/");
    mount(
        None::<&str>,
        root,
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| fail("cannot make private", root, e))?;
    let write_anywhere = writable.iter().any(|w| w.root == root);
    if !write_anywhere {
        for w in writable {
            bind(&w.root, &w.root)?;
        }
        for point in mount_points()? {
            if writable.iter().any(|w| point.starts_with(&w.root)) {
                continue;
            }
            match remount_read_only(&point) {
                Ok(()) => {}
                // Mounts hidden under later mounts, or gone: nothing reachable to protect.
                Err(_) if !point.exists() => {}
                Err(err) if point == root => return Err(err),
                Err(err) => {
                    // A reachable mount we could not protect: refuse rather than run open.
                    return Err(err);
                }
            }
        }
        for w in writable {
            for sub in &w.read_only_subpaths {
                super::protected::protect(sub)?;
            }
        }
    }
    fresh_proc()?;
    minimal_dev(devices)?;
    let read_only: Vec<PathBuf> = writable
        .iter()
        .flat_map(|w| w.read_only_subpaths.iter().cloned())
        .collect();
    pin_ancestors(writable, &read_only)?;
    pin_ancestors(writable, deny_read)?;
    for path in deny_read {
        mask(path)?;
    }
    Ok(())
}

/// Makes every directory between a writable root and each of `paths` (deny-read masks,
/// read-only subpaths) a mount point (bound onto itself), so that inside the sandbox it
/// cannot be renamed or removed (`EBUSY`): a mount is attached to the path as it was when
/// the view was built, and renaming a directory above it carries the mount away — `mv conf
/// conf2` would take a masked file to a name the next command's view does not mask, `mv repo
/// repo2` the read-only `repo/.git` a worktree's `.git` file names, leaving `repo/.git` to be
/// made anew. The path itself is a mount point already. Ancestors outside the writable
/// roots are read-only anyway.
fn pin_ancestors(writable: &[WritableRoot], paths: &[PathBuf]) -> R {
    let mut pinned: Vec<PathBuf> = Vec::new();
    for path in paths {
        let Some(root) = writable
            .iter()
            .map(|w| w.root.as_path())
            .filter(|root| path.starts_with(root) && path != root)
            .max_by_key(|root| root.as_os_str().len())
        else {
            continue;
        };
        let mut ancestors: Vec<&Path> = path
            .ancestors()
            .skip(1)
            .take_while(|dir| *dir != root && dir.starts_with(root))
            .collect();
        ancestors.reverse();
        for dir in ancestors {
            if pinned.iter().any(|done| done == dir) || !dir.is_dir() {
                continue;
            }
            bind(dir, dir)?;
            pinned.push(dir.to_path_buf());
        }
    }
    Ok(())
}

pub(super) fn fresh_proc() -> R {
    let proc = Path::new("/proc");
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    if mount(Some("proc"), proc, Some("proc"), flags, None::<&str>).is_err() {
        // Some hosts forbid a new proc (partly masked /proc): keep the old one read-only; the
        // PID namespace still hides outside processes from kill and ptrace.
        bind(proc, proc)?;
        remount_read_only(proc)?;
        return Ok(());
    }
    for knob in ["sys", "sysrq-trigger", "irq", "bus", "fs", "kcore"] {
        let path = proc.join(knob);
        if path.exists() {
            bind(&path, &path)?;
            remount_read_only(&path)?;
        }
    }
    Ok(())
}

fn minimal_dev(devices: &HostDevices) -> R {
    let dev = Path::new("/dev");
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC;
    mount(
        Some("tmpfs"),
        dev,
        Some("tmpfs"),
        flags,
        Some("mode=0755,size=64k"),
    )
    .map_err(|e| fail("cannot mount tmpfs on", dev, e))?;
    for (name, fd) in &devices.0 {
        let target = dev.join(name);
        std::fs::write(&target, b"").map_err(|e| fail("cannot create", &target, e))?;
        let source = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        bind(&source, &target)?;
    }
    for (link, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("ptmx", "pts/ptmx"),
    ] {
        let _ = std::os::unix::fs::symlink(to, dev.join(link));
    }
    for dir in ["shm", "pts"] {
        let _ = std::fs::create_dir(dev.join(dir));
    }
    let shm = dev.join("shm");
    mount(
        Some("tmpfs"),
        &shm,
        Some("tmpfs"),
        flags | MsFlags::MS_NODEV,
        Some("mode=1777"),
    )
    .map_err(|e| fail("cannot mount tmpfs on", &shm, e))?;
    let pts = dev.join("pts");
    // A private devpts for terminals; optional (not every kernel allows it here).
    let _ = mount(
        Some("devpts"),
        &pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=620"),
    );
    // Nothing new can be created in /dev itself.
    mount(
        None::<&str>,
        dev,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | flags,
        Some("mode=0755,size=64k"),
    )
    .map_err(|e| fail("cannot make read-only", dev, e))
}

/// Makes `path` unreadable: an empty read-only tmpfs over a directory, `/dev/null` over a
/// file. A path that does not exist has nothing to hide.
fn mask(path: &Path) -> R {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        let flags =
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            flags,
            Some("size=0,mode=0000"),
        )
        .map_err(|e| fail("cannot mask", path, e))
    } else {
        bind(Path::new("/dev/null"), path)?;
        remount_read_only(path)
    }
}
