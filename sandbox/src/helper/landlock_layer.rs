//! The Landlock layer: read and execute everywhere, write only under the writable roots and a
//! few device nodes; with the network off, no TCP bind/connect (ABI 4+); no signals to, and no
//! abstract-socket connections with, processes outside the sandbox (ABI 6+). Best effort: an
//! older kernel enforces what it knows.
//!
//! Landlock rights only ever add up down a hierarchy, so a read-only `.git` inside a writable
//! root cannot be carved out of a rule on the root. Where the root holds protected subpaths,
//! the root's rule is split instead: full rights on each of its entries except the protected
//! ones (recursing into an entry that holds one deeper down), and on the root itself (and
//! each directory on the way to a protected path) only the right to create regular files and
//! directories. So a command cannot change, remove or rename anything in `.git`, nor remove
//! or replace `.git` itself; what it loses is writing new entries directly in such a
//! directory (it can create them, empty, and write them in a later command, when they are
//! entries of their own), removing or renaming entries there, and making links there.
//! Symlinked entries get no rule of their own (a rule follows the link, which could point
//! anywhere).
//!
//! Deny-read paths are carved out of the read rule on `/` the same way: full read on every
//! entry of `/` except those on the way to a hidden path, recursing, and on each directory on
//! the way only the right to list it. A hidden file is then readable by no rule, whatever
//! name reaches it (a hard link made earlier is another name for the same inode, but making
//! one needs the file's directory to be writable, which it is not), and a file the host puts
//! in its place while the command runs is a new inode no rule covers either. What it costs:
//! names on the way stay listable, and an entry added beside a hidden path after the command
//! started is unreadable to it. `crate::probe::LANDLOCK_LIMITS` says all of it, for the
//! warning and `troupe doctor`.

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Devices every command may write (output sinks and the terminal).
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// How much of the ruleset the kernel enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    Full,
    Partial,
    None,
}

/// The ruleset for `writable` (empty = read-only), built but not yet applied: the zygote
/// builds it once and every child applies its own copy. `protected` paths inside a writable
/// root stay read-only and `hidden` ones (absolute, without symlinks) cannot be read or
/// written at all (see the module's comment for what that costs); the namespace backends
/// pass none of either (their mount view protects and hides them).
pub fn prepare(
    writable: &[PathBuf],
    protected: &[PathBuf],
    hidden: &[PathBuf],
    network: bool,
    proxy_port: Option<u16>,
) -> Result<RulesetCreated, String> {
    let abi = ABI::V6;
    let fail = |what: &str, err: &dyn std::fmt::Display| format!("landlock {what}: {err}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| fail("filesystem rights", &e))?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(|e| fail("scopes", &e))?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| fail("network rights", &e))?;
    }
    let mut created = ruleset.create().map_err(|e| fail("ruleset", &e))?;
    if let (false, Some(port)) = (network, proxy_port) {
        // The network proxy's bridge: the only TCP port a command may connect to.
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(|e| fail("proxy port rule", &e))?;
    }
    let read = AccessFs::from_read(abi);
    if hidden.is_empty() {
        created = created
            .add_rules(path_beneath_rules(["/"], read))
            .map_err(|e| fail("read rule", &e))?;
    } else {
        let root = Path::new("/");
        let inside: Vec<&Path> = hidden.iter().map(PathBuf::as_path).collect();
        if !inside.contains(&root) {
            let fd = open_path(None, root.as_os_str()).map_err(|e| fail("read rule", &e))?;
            let mut rules = Vec::new();
            split_rules(
                root,
                fd,
                &inside,
                read,
                AccessFs::ReadDir.into(),
                &mut rules,
            );
            for (fd, access) in rules {
                created = created
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(|e| fail("read rule", &e))?;
            }
        }
    }
    let devices: Vec<&str> = WRITABLE_DEVICES
        .iter()
        .copied()
        .filter(|d| std::path::Path::new(d).exists())
        .collect();
    created = created
        .add_rules(path_beneath_rules(devices, AccessFs::from_all(abi)))
        .map_err(|e| fail("device rule", &e))?;
    let all = AccessFs::from_all(abi);
    for root in writable {
        // A hidden path gets no write rule either: a rule on a root holding one would also
        // let it be read.
        let inside: Vec<&Path> = protected
            .iter()
            .chain(hidden)
            .map(PathBuf::as_path)
            .filter(|p| p.starts_with(root))
            .collect();
        if inside.is_empty() {
            created = created
                .add_rules(path_beneath_rules([root], all))
                .map_err(|e| fail("writable-root rule", &e))?;
            continue;
        }
        if inside.contains(&root.as_path()) {
            continue;
        }
        let Ok(fd) = open_path(None, root.as_os_str()) else {
            continue;
        };
        let mut rules = Vec::new();
        split_rules(root, fd, &inside, all, creation_only(), &mut rules);
        for (fd, access) in rules {
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| fail("writable-entry rule", &e))?;
        }
    }
    Ok(created)
}

/// Rights on a directory that holds a protected path: creating regular files and
/// directories (not symlinks or hard links, which could point a later write anywhere).
fn creation_only() -> landlock::BitFlags<AccessFs> {
    AccessFs::MakeReg | AccessFs::MakeDir
}

/// The rules granting `all` on everything beneath `dir` (open as `dir_fd`) but the
/// `protected` paths (all strictly inside `dir`), and `on_the_way` on `dir` and each
/// directory between it and a protected path.
fn split_rules(
    dir: &Path,
    dir_fd: OwnedFd,
    protected: &[&Path],
    all: landlock::BitFlags<AccessFs>,
    on_the_way: landlock::BitFlags<AccessFs>,
    rules: &mut Vec<(OwnedFd, landlock::BitFlags<AccessFs>)>,
) {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    for entry in entries {
        let path = dir.join(entry.file_name());
        if protected.contains(&path.as_path()) {
            continue;
        }
        // Opened beneath the directory without following a link: an entry swapped for a
        // symlink since it was listed gets no rule rather than one on the link's target.
        let Ok(fd) = open_path(Some(&dir_fd), entry.file_name().as_os_str()) else {
            continue;
        };
        let Ok(stat) = nix::sys::stat::fstat(fd.as_raw_fd()) else {
            continue;
        };
        let kind =
            nix::sys::stat::SFlag::from_bits_truncate(stat.st_mode) & nix::sys::stat::SFlag::S_IFMT;
        if kind == nix::sys::stat::SFlag::S_IFLNK {
            continue;
        }
        let deeper: Vec<&Path> = protected
            .iter()
            .copied()
            .filter(|p| p.starts_with(&path))
            .collect();
        if deeper.is_empty() {
            rules.push((fd, all));
        } else if kind == nix::sys::stat::SFlag::S_IFDIR {
            split_rules(&path, fd, &deeper, all, on_the_way, rules);
        }
    }
    if !on_the_way.is_empty() {
        rules.push((dir_fd, on_the_way));
    }
}

/// Under the namespace backends, the layer that keeps each `hidden` path (absolute, without
/// symlinks, outside every writable root) unreadable by one command: it handles only reading
/// files, granted on every entry of `/` except those on the way to a hidden path (recursing).
/// Their mount view masks the path already, but the kernel detaches a mask whose path the host
/// renames a new file over while a command runs; no rule covers that new file. Built in the
/// command's own process just before exec, so it sees the entries of that moment: what the
/// command cannot read is an entry added beside a hidden path (or in a directory on the way,
/// such as `$HOME`) while it runs. Best effort, like the rest of the second layer.
pub fn hide_until_exit(hidden: &[PathBuf]) -> Result<Enforcement, String> {
    let fail = |what: &str, err: &dyn std::fmt::Display| format!("landlock {what}: {err}");
    let root = Path::new("/");
    let inside: Vec<&Path> = hidden.iter().map(PathBuf::as_path).collect();
    if inside.is_empty() || inside.contains(&root) {
        return Ok(Enforcement::None);
    }
    let read: landlock::BitFlags<AccessFs> = AccessFs::ReadFile.into();
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(read)
        .map_err(|e| fail("read rights", &e))?
        .create()
        .map_err(|e| fail("ruleset", &e))?;
    let fd = open_path(None, root.as_os_str()).map_err(|e| fail("read rule", &e))?;
    let mut rules = Vec::new();
    split_rules(
        root,
        fd,
        &inside,
        read,
        landlock::BitFlags::EMPTY,
        &mut rules,
    );
    for (fd, access) in rules {
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| fail("read rule", &e))?;
    }
    enforce(created)
}

/// `O_PATH` descriptor of `name` (beneath `dir` when given), never following a final link.
fn open_path(dir: Option<&OwnedFd>, name: &std::ffi::OsStr) -> Result<OwnedFd, nix::Error> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::openat(
        dir.map(std::os::fd::AsRawFd::as_raw_fd),
        name,
        flags,
        nix::sys::stat::Mode::empty(),
    )?;
    // SAFETY: `openat` returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Applies a prepared ruleset to this thread (and what it execs).
pub fn enforce(created: RulesetCreated) -> Result<Enforcement, String> {
    let status = created
        .restrict_self()
        .map_err(|e| format!("landlock restrict_self: {e}"))?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Enforcement::Full,
        RulesetStatus::PartiallyEnforced => Enforcement::Partial,
        RulesetStatus::NotEnforced => Enforcement::None,
    })
}
