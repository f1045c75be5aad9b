//! Where a patch may read and write, enforced by the kernel at the moment of each access.
//!
//! Every path of a patch is first *located*: its existing part resolved (symlinks followed
//! once, now), then split into an anchor (the writable root it lies under, or `/`) and a
//! remainder free of symlinks and `..`. Every later access opens the anchor and walks the
//! remainder with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, so a symlink planted or
//! flipped after the check (a dangling `L -> D/../..` that a later file of the same patch
//! makes live, a background command racing the write) makes the patch fail instead of
//! sending the write elsewhere. Symlinks inside the workspace are still followed, as Codex
//! does, because locating resolves them; what is followed is exactly what was checked.
//!
//! Locating also refuses, before anything is written, targets in `.git`/`.troupe` at any
//! depth (when the profile protects them) and anything under a deny-read path.

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::{Mode, SFlag};
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use troupe_messages::policy::{FileSystemSandboxKind, PermissionProfile};

/// Directory names a restricted profile keeps read-only (hooks and config run code later).
const PROTECTED_NAMES: &[&str] = &[".git", ".troupe"];

/// What a patch may touch, from the session's permission profile.
#[derive(Debug, Clone, Default)]
pub struct Confinement {
    /// Canonical writable roots; a path under one is anchored there.
    roots: Vec<PathBuf>,
    /// Canonical deny-read paths, and the identity of each that exists (for hard links).
    deny_read: Vec<PathBuf>,
    deny_ids: Vec<(u64, u64)>,
    /// `.git` / `.troupe` at any depth are refused.
    protect_metadata: bool,
}

/// A path split into the directory every access starts from and a remainder that must be
/// walked beneath it without symlinks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    anchor: PathBuf,
    rel: PathBuf,
}

/// Why locating refused a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Protected,
    DenyRead,
    NoFileName,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Protected => "it is inside a protected directory (.git or .troupe)",
            Refusal::DenyRead => "it is under a deny-read path (sandbox_deny_read)",
            Refusal::NoFileName => "it does not name a file",
        })
    }
}

impl Confinement {
    /// No roots, nothing refused: paths anchor at `/` (still walked without symlinks).
    pub fn unconfined() -> Self {
        Self::default()
    }

    /// The confinement of patches under `profile`.
    pub fn for_profile(profile: &PermissionProfile) -> Self {
        let PermissionProfile::Managed { file_system, .. } = profile else {
            return Self::unconfined();
        };
        let roots = match file_system.kind {
            FileSystemSandboxKind::Restricted => file_system
                .writable_roots
                .iter()
                .map(|w| canonical(&w.root))
                .collect(),
            FileSystemSandboxKind::Unrestricted | FileSystemSandboxKind::External => Vec::new(),
        };
        let deny_read: Vec<PathBuf> = file_system.deny_read.iter().map(|p| canonical(p)).collect();
        let deny_ids = deny_read
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(std::fs::Metadata::is_file)
            .map(|meta| identity(&meta))
            .collect();
        Self {
            roots,
            deny_read,
            deny_ids,
            protect_metadata: file_system.kind == FileSystemSandboxKind::Restricted,
        }
    }

    /// Resolves `path` (absolute) as it is now: symlinks of its existing part followed (the
    /// last one only when `follow_final`), `..` applied. Refuses protected and denied paths.
    pub fn locate(&self, path: &Path, follow_final: bool) -> Result<Located, Refusal> {
        let resolved = resolve_now(path, follow_final);
        if resolved.file_name().is_none() || resolved == Path::new("/") {
            return Err(Refusal::NoFileName);
        }
        if self
            .deny_read
            .iter()
            .any(|denied| resolved.starts_with(denied))
        {
            return Err(Refusal::DenyRead);
        }
        let anchor = self
            .roots
            .iter()
            .filter(|root| resolved.starts_with(root))
            .max_by_key(|root| root.as_os_str().len())
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/"));
        let rel = resolved
            .strip_prefix(&anchor)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if rel.as_os_str().is_empty() {
            return Err(Refusal::NoFileName);
        }
        // Inside a root only the part below it counts (a root may itself live in a dotdir);
        // outside every root the whole path does.
        let checked = if anchor == Path::new("/") {
            &resolved
        } else {
            &rel
        };
        if self.protect_metadata && checked.components().any(is_protected) {
            return Err(Refusal::Protected);
        }
        Ok(Located { anchor, rel })
    }

    /// Reads the located file: `None` when it does not exist. A symlink anywhere on the way
    /// (planted since it was located) is an error, as is anything but a regular file.
    pub fn read(&self, at: &Located) -> Result<Option<Vec<u8>>, std::io::Error> {
        use std::io::Read;
        let anchor = open_anchor(&at.anchor)?;
        let flags = OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOCTTY | OFlag::O_NONBLOCK;
        let fd = match open_beneath(&anchor, &at.rel, flags) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            Err(errno) => return Err(errno.into()),
        };
        let meta = nix::sys::stat::fstat(fd.as_raw_fd())?;
        if SFlag::from_bits_truncate(meta.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
            return Err(std::io::Error::other("it is not a regular file"));
        }
        if self
            .deny_ids
            .contains(&(meta.st_dev as u64, meta.st_ino as u64))
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                Refusal::DenyRead.to_string(),
            ));
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd).read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }
}

impl Located {
    /// The absolute path this resolves to (what approval is asked for).
    pub fn path(&self) -> PathBuf {
        self.anchor.join(&self.rel)
    }

    /// The final component.
    pub fn name(&self) -> &OsStr {
        self.rel.file_name().unwrap_or_default()
    }

    /// Opens the parent directory, walking beneath the anchor without symlinks; with
    /// `created` given, missing directories are made and recorded (parent fd, name), parents
    /// first, so they can be removed again.
    pub fn open_parent(
        &self,
        mut created: Option<&mut Vec<(OwnedFd, OsString)>>,
    ) -> Result<OwnedFd, std::io::Error> {
        let mut dir = open_anchor(&self.anchor)?;
        let parent = self.rel.parent().unwrap_or(Path::new(""));
        for part in parent.components() {
            let Component::Normal(name) = part else {
                return Err(Errno::EXDEV.into());
            };
            let next = match open_beneath(&dir, Path::new(name), dir_flags()) {
                Err(Errno::ENOENT) if created.is_some() => {
                    nix::sys::stat::mkdirat(
                        Some(dir.as_raw_fd()),
                        name,
                        Mode::from_bits_truncate(0o777),
                    )?;
                    if let Some(created) = created.as_deref_mut() {
                        created.push((dir.try_clone()?, name.to_os_string()));
                    }
                    let made = open_beneath(&dir, Path::new(name), dir_flags())?;
                    // The user's mask, not the runtime's private one; set through the
                    // descriptor's own /proc link (an O_PATH descriptor takes no fchmod),
                    // so it is this directory even if the name was swapped meanwhile.
                    if let Some(mask) = troupe_messages::file_mask::user_mask() {
                        use std::os::unix::fs::PermissionsExt;
                        std::fs::set_permissions(
                            format!("/proc/self/fd/{}", made.as_raw_fd()),
                            std::fs::Permissions::from_mode(0o777 & !mask),
                        )?;
                    }
                    made
                }
                other => other?,
            };
            dir = next;
        }
        Ok(dir)
    }
}

fn is_protected(part: Component<'_>) -> bool {
    let Component::Normal(name) = part else {
        return false;
    };
    let name = name.to_string_lossy();
    PROTECTED_NAMES
        .iter()
        .any(|protected| name.eq_ignore_ascii_case(protected))
}

fn dir_flags() -> OFlag {
    OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC
}

fn open_anchor(anchor: &Path) -> Result<OwnedFd, std::io::Error> {
    // The anchor is canonical: a symlink there now means it was swapped since.
    let how = OpenHow::new()
        .flags(dir_flags())
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    let fd = nix::fcntl::openat2(libc::AT_FDCWD, anchor, how)?;
    // SAFETY: `openat2` returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `openat2` beneath `dir`: no symlink (magic or not) and no `..` may leave it.
pub(super) fn open_beneath(dir: &OwnedFd, rel: &Path, flags: OFlag) -> Result<OwnedFd, Errno> {
    let how = OpenHow::new().flags(flags).resolve(
        ResolveFlag::RESOLVE_BENEATH
            | ResolveFlag::RESOLVE_NO_SYMLINKS
            | ResolveFlag::RESOLVE_NO_MAGICLINKS,
    );
    let fd = nix::fcntl::openat2(dir.as_raw_fd(), rel, how)?;
    // SAFETY: `openat2` returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// `path` with its longest existing ancestor canonicalised (the rest joined as written).
pub fn canonical(path: &Path) -> PathBuf {
    resolve_now(path, true)
}

/// Component by component: `..` pops, a symlink is replaced by its canonical target (a
/// dangling one is kept as a name: walking it later fails), anything else is appended.
fn resolve_now(path: &Path, follow_final: bool) -> PathBuf {
    let parts: Vec<Component<'_>> = path.components().collect();
    let mut current = PathBuf::from("/");
    for (index, part) in parts.iter().enumerate() {
        match part {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                current.pop();
            }
            Component::Normal(name) => {
                let candidate = current.join(name);
                let last = index + 1 == parts.len();
                let is_link = std::fs::symlink_metadata(&candidate)
                    .is_ok_and(|meta| meta.file_type().is_symlink());
                current = match std::fs::canonicalize(&candidate) {
                    Ok(real) if is_link && (follow_final || !last) => real,
                    _ => candidate,
                };
            }
        }
    }
    current
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
