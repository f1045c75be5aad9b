//! `apply_patch`: Codex's patch format, applied atomically. Pure: no actors, no events.
//!
//! [`parser`] reads the grammar, [`seek`] finds a chunk's lines leniently, [`plan`] computes
//! every file's final contents in memory, [`commit`] writes them all or none, every access
//! walking beneath the directory [`beneath`] located it in. The tool
//! handler, the shell interception and the `apply_patch` arg0 personality all call
//! [`apply_patch`].

pub mod beneath;
pub mod commit;
pub mod error;
pub mod lexical;
pub mod parser;
pub mod plan;
pub mod seek;

pub use beneath::{Confinement, Refusal};
pub use error::{ParseError, PatchError};
pub use plan::{Affected, Change, ChangeKind, FinalState, Plan};
use std::path::Path;

/// Patches larger than this are refused before parsing (a model gone astray, not an edit).
pub const MAX_PATCH_BYTES: usize = 16 * 1024 * 1024;

/// Parses `patch`, computes every change relative to `cwd`, and writes them atomically, with
/// no confinement but the process's own (the `apply_patch` command inside a sandbox).
pub fn apply_patch(patch: &str, cwd: &Path) -> Result<Plan, PatchError> {
    let plan = prepare(patch, cwd, &Confinement::unconfined())?;
    commit::commit(&plan)?;
    Ok(plan)
}

/// Everything `apply_patch` does except writing: the patch is valid, applies cleanly to the
/// files as they are now, and touches nothing `confinement` refuses.
pub fn prepare(patch: &str, cwd: &Path, confinement: &Confinement) -> Result<Plan, PatchError> {
    prepare_over(patch, cwd, confinement, std::collections::BTreeMap::new())
}

/// [`prepare`] over an editor's texts of some files (unsaved buffers), keyed by absolute
/// path; every path is still located under `confinement`.
pub fn prepare_over(
    patch: &str,
    cwd: &Path,
    confinement: &Confinement,
    buffers: std::collections::BTreeMap<std::path::PathBuf, String>,
) -> Result<Plan, PatchError> {
    if patch.len() > MAX_PATCH_BYTES {
        return Err(PatchError::TooLarge {
            bytes: patch.len(),
            limit: MAX_PATCH_BYTES,
        });
    }
    let hunks = parser::parse_patch(patch)?;
    plan::plan_hunks_over(&hunks, cwd, confinement, buffers)
}

/// The existing files a patch reads (updated or deleted), absolute, that `confinement`
/// lets it touch: what an editor is asked for before [`prepare_over`]. Empty for a patch
/// that does not parse (preparing it reports why).
pub fn files_read(patch: &str, cwd: &Path, confinement: &Confinement) -> Vec<std::path::PathBuf> {
    let Ok(hunks) = parser::parse_patch(patch) else {
        return Vec::new();
    };
    hunks
        .iter()
        .filter(|hunk| !matches!(hunk, parser::Hunk::Add { .. }))
        .filter_map(|hunk| lexical::resolve(cwd, hunk.path()).ok())
        .filter(|path| confinement.locate(path, true).is_ok())
        .collect()
}

/// Codex's success text: `Success. Updated the following files:` then `A`/`M`/`D` lines.
pub fn summary(affected: &[Affected]) -> String {
    let mut text = String::from("Success. Updated the following files:\n");
    let mut section = |letter: char, pick: fn(&Affected) -> Option<&Path>| {
        for path in affected.iter().filter_map(pick) {
            text.push_str(&format!("{letter} {}\n", path.display()));
        }
    };
    section('A', |a| match a {
        Affected::Added(path) => Some(path),
        _ => None,
    });
    section('M', |a| match a {
        Affected::Modified(path) => Some(path),
        _ => None,
    });
    section('D', |a| match a {
        Affected::Deleted(path) => Some(path),
        _ => None,
    });
    text
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod apply_tests;
