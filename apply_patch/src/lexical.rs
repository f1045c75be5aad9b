//! Patch paths made absolute without touching the disk: `.` dropped and `..` applied to
//! the text, so `d/./x/../y.txt` means `d/y.txt` even when `d/x` does not exist (the kernel
//! would refuse to walk through a missing `x`), and a relative path that climbs above the
//! working directory is refused before anything is read or written, whatever the sandbox.

use std::path::{Component, Path, PathBuf};

/// Why a patch path cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathProblem {
    /// A relative path whose `..` climb above the working directory.
    EscapesCwd,
    /// Nothing is left to name a file (`.`, `d/..`, an empty header).
    NoFileName,
}

/// `path` resolved against `cwd` lexically. An absolute `path` is only normalised (`..`
/// never climbs above `/`); a relative one must stay beneath `cwd`. A trailing slash is
/// dropped, so `newdir/` names the file `newdir`, as Codex writes it.
pub fn resolve(cwd: &Path, path: &Path) -> Result<PathBuf, PathProblem> {
    let mut kept: Vec<&std::ffi::OsStr> = Vec::new();
    for part in path.components() {
        match part {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                if kept.pop().is_none() && path.is_relative() {
                    return Err(PathProblem::EscapesCwd);
                }
            }
            Component::Normal(name) => kept.push(name),
        }
    }
    if kept.is_empty() {
        return Err(PathProblem::NoFileName);
    }
    // The working directory is taken as given: it may hold symlinks, where a textual `..`
    // would not mean what the kernel makes of it.
    let base = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    };
    Ok(kept.into_iter().fold(base, |acc, name| acc.join(name)))
}

#[cfg(test)]
#[path = "lexical_tests.rs"]
mod tests;
