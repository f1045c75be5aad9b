//! `troupe exec resume [ID|--last] [PROMPT]`: which thread to continue.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use troupe_actors::thread_store::{ops, reconcile, ThreadStore};
use troupe_messages::threads::ThreadSummary;

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// Thread id (or a unique prefix of it). With `--last`, this is the prompt instead.
    session_id: Option<String>,
    /// The follow-up prompt; `-` or absent reads it from stdin.
    prompt: Option<String>,
    /// Continue the most recently updated thread of this directory.
    #[arg(long = "last")]
    last: bool,
    /// With `--last`, consider threads of every directory.
    #[arg(long = "all")]
    all: bool,
}

impl ResumeArgs {
    /// `resume ID PROMPT`.
    pub fn by_id(id: String, prompt: String) -> Self {
        Self {
            session_id: Some(id),
            prompt: Some(prompt),
            last: false,
            all: false,
        }
    }
}

/// The thread to resume and the prompt to continue it with. `cd` is the resolved `--cd`
/// directory: `--last` looks for threads of it rather than of the process's directory.
pub fn pick(
    home: &Path,
    store: Option<&ThreadStore>,
    args: ResumeArgs,
    cd: Option<&Path>,
) -> Result<(ThreadSummary, Option<String>)> {
    let (target, prompt) = if args.last {
        let cwd = match cd {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let cwd = canonical(&cwd);
        let threads = match store {
            Some(store) => {
                reconcile::reconcile(store, home)?;
                store.list()?
            }
            None => reconcile::scan(home).0,
        };
        let last = threads
            .into_iter()
            // A sub-agent's thread is part of its root's: `--last` means the user's own.
            .filter(|t| t.task_path.is_none())
            .filter(|t| !t.archived && (args.all || canonical(&t.cwd) == cwd))
            .max_by_key(|t| t.updated_at_ms);
        let Some(last) = last else {
            bail!("no thread to resume in {} (`--all` looks in every directory; `troupe list --all` shows them)", cwd.display());
        };
        // `exec resume --last PROMPT`: the first positional is the prompt.
        (last, args.session_id.or(args.prompt))
    } else {
        let Some(id) = args.session_id else {
            bail!("give a thread id to resume, or --last (`troupe list` shows the ids)");
        };
        (ops::find(home, store, &id)?, args.prompt)
    };
    if target.archived {
        bail!(
            "thread {} is archived; `troupe unarchive {}` first",
            target.id,
            target.id
        );
    }
    Ok((target, prompt))
}

/// `dir` with symlinks and `.`/`..` resolved, so two spellings of one directory compare
/// equal; as given when it no longer exists (a thread's directory may have been removed).
fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}
