//! `troupe apply`: applies the diff of the last turn that changed files (from the newest
//! rollout under `$TROUPE_HOME/sessions`) to the work tree with `git apply`.

use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
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
    refuse_protected_paths(&diff)?;
    let cwd = match args.cwd {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    // Checked first: spawning in a missing directory fails with the same "not found" as a
    // missing `git`, and the user needs to know which.
    if !cwd.is_dir() {
        bail!("cannot apply in {}: no such directory", cwd.display());
    }
    let mut git = Command::new("git")
        .args(["apply", "-"])
        .current_dir(&cwd)
        .stdin(Stdio::piped())
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
    let status = git.wait().context("waiting for `git apply`")?;
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

/// Refuses a diff that names a path inside `.git` or `.troupe` (any depth, any case), an
/// absolute path or one with `..`: a rollout file is input, and those paths run code later
/// (hooks, config, rules). `git apply` itself refuses writes beyond a symlink and into `.git`;
/// this keeps `.troupe` out too, and says why before anything is touched.
fn refuse_protected_paths(diff: &str) -> Result<()> {
    for path in diff_paths(diff) {
        let bad = path.starts_with('/')
            || path.split('/').any(|part| {
                part == ".."
                    || part.eq_ignore_ascii_case(".git")
                    || part.eq_ignore_ascii_case(".troupe")
            });
        if bad {
            bail!(
                "refusing to apply: the diff touches `{path}` (inside .git/.troupe, absolute, or \
                 with `..`); nothing was changed"
            );
        }
    }
    Ok(())
}

/// Every path a unified diff names in its `---`/`+++` headers (without the `a/`/`b/`
/// prefixes; `/dev/null` skipped).
fn diff_paths(diff: &str) -> Vec<&str> {
    diff.lines()
        .filter_map(|line| {
            line.strip_prefix("--- ")
                .or_else(|| line.strip_prefix("+++ "))
        })
        .map(|path| path.split('\t').next().unwrap_or(path).trim_end())
        .filter(|path| *path != "/dev/null")
        .map(|path| {
            path.strip_prefix("a/")
                .or_else(|| path.strip_prefix("b/"))
                .unwrap_or(path)
        })
        .collect()
}

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
