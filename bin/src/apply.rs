//! `troupe apply`: applies the diff of the last turn that changed files (from the newest
//! rollout under `$TROUPE_HOME/sessions`) to the work tree with `git apply`.

use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Output, Stdio};
use troupe_messages::events::EventMsg;
use troupe_messages::rollout::{RolloutLine, RolloutRecord};

/// Arguments of `troupe apply`.
#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    /// Rollout file to take the diff from (default: the newest one).
    #[arg(long)]
    pub rollout: Option<PathBuf>,
    /// Directory to apply in (default: the current directory).
    #[arg(long = "cd", short = 'C')]
    pub cwd: Option<PathBuf>,
}

pub fn run(args: ApplyArgs) -> Result<ExitCode> {
    let rollout = match args.rollout {
        Some(path) => path,
        None => {
            let home = troupe_config::home::troupe_home()?;
            newest_rollout(&home.join("sessions"))?.ok_or_else(|| {
                anyhow!(
                    "no sessions under {}: run `troupe exec` first",
                    home.display()
                )
            })?
        }
    };
    let diff = last_turn_diff(&rollout)?.ok_or_else(|| {
        anyhow!(
            "{} has no file changes to apply (no turn changed files with apply_patch)",
            rollout.display()
        )
    })?;
    let cwd = match args.cwd {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    // Checked first: spawning in a missing directory fails with the same "not found" as a
    // missing `git`, and the user needs to know which.
    if !cwd.is_dir() {
        bail!("cannot apply in {}: no such directory", cwd.display());
    }
    refuse_protected_paths(&patched_paths(&cwd, &diff)?)?;
    let status = git_with_diff(&cwd, &["apply", "-"], &diff, Stdio::inherit())?.status;
    if !status.success() {
        bail!(
            "`git apply` failed in {} (see above); the work tree may differ from the one the \
             agent changed",
            cwd.display()
        );
    }
    eprintln!("Applied the last turn's diff from {}", rollout.display());
    Ok(ExitCode::SUCCESS)
}

/// Runs the hardened host git with `diff` on stdin; stdout captured.
fn git_with_diff(cwd: &Path, args: &[&str], diff: &str, stderr: Stdio) -> Result<Output> {
    let mut git = troupe_sandbox::host_git::command(cwd, args)?
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .with_context(|| {
            format!(
                "cannot run `git apply` in {}: is git installed?",
                cwd.display()
            )
        })?;
    if let Some(mut stdin) = git.stdin.take() {
        stdin
            .write_all(diff.as_bytes())
            .context("cannot send the diff to `git apply`")?;
    }
    git.wait_with_output().context("waiting for `git apply`")
}

/// Every path the diff touches, as `git apply` itself reads it (quoted and escaped names
/// decoded), so the check sees what would be written or removed however the diff spells
/// it. `--numstat -z` names one side of each file: the new name (the old one of a deletion);
/// the same with `-R` names the other, so a rename or copy gives its source and destination.
fn patched_paths(cwd: &Path, diff: &str) -> Result<Vec<String>> {
    let mut paths = Vec::new();
    for args in [
        &["apply", "--numstat", "-z", "-"][..],
        &["apply", "-R", "--numstat", "-z", "-"],
    ] {
        let out = git_with_diff(cwd, args, diff, Stdio::piped())?;
        if !out.status.success() {
            bail!(
                "`git apply` cannot read the diff: {}",
                String::from_utf8_lossy(&out.stderr).trim().escape_debug()
            );
        }
        paths.extend(numstat_paths(&String::from_utf8_lossy(&out.stdout)));
    }
    Ok(paths)
}

/// The paths of `--numstat -z` output: `added TAB deleted TAB path NUL`, or (as `git diff
/// --numstat -z` prints renames) `added TAB deleted TAB NUL source NUL destination NUL`.
fn numstat_paths(raw: &str) -> Vec<String> {
    let mut fields = raw.split('\0');
    let mut out = Vec::new();
    while let Some(record) = fields.next() {
        let mut parts = record.splitn(3, '\t');
        let (Some(_), Some(_), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if path.is_empty() {
            out.extend(fields.next().map(str::to_string));
            out.extend(fields.next().map(str::to_string));
        } else {
            out.push(path.to_string());
        }
    }
    out
}

/// Refuses a diff that touches a path inside `.git` or `.troupe` (any depth, any case, with
/// the trailing dots or spaces some filesystems drop), an absolute path or one with `..`: a
/// rollout file is input, and those paths run code later (hooks, config, rules). This says
/// why before anything is touched.
fn refuse_protected_paths(paths: &[String]) -> Result<()> {
    for path in paths {
        let bad = path.starts_with('/')
            || path.split('/').any(|part| {
                let bare = part.trim_end_matches(['.', ' ']);
                part == ".."
                    || bare.eq_ignore_ascii_case(".git")
                    || bare.eq_ignore_ascii_case(".troupe")
            });
        if bad {
            bail!(
                "refusing to apply: the diff touches `{}` (inside .git/.troupe, absolute, or \
                 with `..`); nothing was changed",
                path.escape_debug()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;

/// The newest `*.jsonl` under `dir`, by modification time.
fn newest_rollout(dir: &Path) -> Result<Option<PathBuf>> {
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                let modified = entry.metadata().and_then(|m| m.modified())?;
                if newest.as_ref().is_none_or(|(time, _)| modified > *time) {
                    newest = Some((modified, path));
                }
            }
        }
    }
    Ok(newest.map(|(_, path)| path))
}

/// The last `turn_diff` event of a rollout (each is the whole diff of its turn so far).
fn last_turn_diff(rollout: &Path) -> Result<Option<String>> {
    let text = troupe_config::regular_file::read_to_string(rollout)
        .with_context(|| format!("cannot read {}", rollout.display()))?;
    let mut last = None;
    for line in text.lines() {
        // Lines of other kinds or versions are skipped, not fatal: only diffs matter here.
        if let Ok(RolloutLine {
            record: RolloutRecord::Event(EventMsg::TurnDiff { unified_diff }),
            ..
        }) = serde_json::from_str::<RolloutLine>(line)
        {
            last = Some(unified_diff);
        }
    }
    Ok(last)
}
