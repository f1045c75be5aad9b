//! `[cluster] worker_roots`: the directories this worker runs shared-workspace threads in.
//! The directory comes from the network, so it is taken only when, symlinks resolved, it
//! is one of them or below one; with none configured no shared-workspace thread runs here
//! (a git workspace is checked out under the worker's own home and always runs).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The configured roots with symlinks resolved; one that does not exist is an error (a
/// typo must not silently refuse every request, nor widen anything).
pub fn resolve(roots: &[PathBuf]) -> Result<Vec<PathBuf>> {
    roots
        .iter()
        .map(|root| {
            if !root.is_absolute() {
                bail!(
                    "[cluster] worker_roots: `{}` is not an absolute path",
                    root.display()
                );
            }
            std::fs::canonicalize(root).with_context(|| {
                format!(
                    "[cluster] worker_roots: `{}` is not a usable directory",
                    root.display()
                )
            })
        })
        .collect()
}

/// `cwd` resolved, when it lies in one of `roots` (already resolved): the thread then works
/// in the resolved path, not in one whose symlinks could be swapped after the check.
pub fn check(roots: &[PathBuf], cwd: &Path) -> Result<PathBuf> {
    if roots.is_empty() {
        bail!(
            "this worker runs no thread in a shared directory ({} asked): it has no \
             [cluster] worker_roots (list the directories it may work in, or use \
             [cluster] workspace = \"git\")",
            cwd.display()
        );
    }
    let resolved = std::fs::canonicalize(cwd)
        .with_context(|| format!("the requested directory {} is not usable", cwd.display()))?;
    if roots.iter().any(|root| resolved.starts_with(root)) {
        return Ok(resolved);
    }
    bail!(
        "this worker does not run threads in {} (outside its [cluster] worker_roots: {})",
        cwd.display(),
        roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
#[path = "roots_tests.rs"]
mod tests;
