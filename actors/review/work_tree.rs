//! The work tree's diff, as Codex's `/diff` shows it when a turn changed nothing: the tracked
//! changes against `HEAD` (staged and unstaged), then each untracked file as an added one.
//! Every git run goes through the hardened host runner (`troupe_sandbox::host_git`).

use std::path::Path;
use std::process::Stdio;
use troupe_sandbox::host_git;

/// Untracked files shown at most (a build directory missing from `.gitignore` would
/// otherwise diff thousands of files).
pub const MAX_UNTRACKED: usize = 200;

/// The work tree's unified diff (empty when clean). Runs `git` (blocking): call it off the
/// async runtime's workers. An error says why (`not inside a Git repository`, git's message).
pub fn work_tree_diff(cwd: &Path) -> Result<String, String> {
    host_git::run(cwd, &["rev-parse", "--show-toplevel"])
        .map_err(|_| format!("{} is not inside a Git repository", cwd.display()))?;
    // A repository with no commit yet has no HEAD: its index is all there is to diff against.
    let has_head = host_git::run(cwd, &["rev-parse", "--verify", "--quiet", "HEAD"]).is_ok();
    let mut out = if has_head {
        host_git::run(cwd, &["diff", "HEAD", "--"]).map_err(|e| e.to_string())?
    } else {
        let mut staged =
            host_git::run(cwd, &["diff", "--cached", "--"]).map_err(|e| e.to_string())?;
        staged.push_str(&host_git::run(cwd, &["diff", "--"]).map_err(|e| e.to_string())?);
        staged
    };
    let untracked = host_git::run(cwd, &["ls-files", "--others", "--exclude-standard", "-z"])
        .map_err(|e| e.to_string())?;
    let files: Vec<&str> = untracked.split('\0').filter(|f| !f.is_empty()).collect();
    for file in files.iter().take(MAX_UNTRACKED) {
        out.push_str(&untracked_diff(cwd, file)?);
    }
    if files.len() > MAX_UNTRACKED {
        out.push_str(&format!(
            "# … and {} more untracked files not shown\n",
            files.len() - MAX_UNTRACKED
        ));
    }
    Ok(out)
}

/// `git diff --no-index /dev/null FILE`: exit code 1 means "they differ", not a failure.
fn untracked_diff(cwd: &Path, file: &str) -> Result<String, String> {
    let output = host_git::command(cwd, &["diff", "--no-index", "--", "/dev/null", file])
        .map_err(|e| e.to_string())?
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    match output.status.code() {
        Some(0 | 1) => Ok(String::from_utf8_lossy(&output.stdout).into_owned()),
        _ => Err(String::from_utf8_lossy(&output.stderr).trim().to_string()),
    }
}

#[cfg(test)]
#[path = "work_tree_tests.rs"]
mod tests;
