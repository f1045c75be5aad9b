//! `troupe exec resume [ID|--last] [PROMPT]`: which thread to continue.

use anyhow::{bail, Result};
use clap::Args;
use std::path::Path;
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

/// The thread to resume and the prompt to continue it with.
pub fn pick(
    home: &Path,
    store: Option<&ThreadStore>,
    args: ResumeArgs,
) -> Result<(ThreadSummary, Option<String>)> {
    let (target, prompt) = if args.last {
        let cwd = std::env::current_dir()?.display().to_string();
        let threads = match store {
            Some(store) => {
                reconcile::reconcile(store, home)?;
                store.list()?
            }
            None => reconcile::scan(home).0,
        };
        let last = threads
            .into_iter()
            .filter(|t| !t.archived && (args.all || t.cwd == cwd))
            .max_by_key(|t| t.updated_at_ms);
        let Some(last) = last else {
            bail!("no thread to resume in {cwd} (`--all` looks in every directory; `troupe list --all` shows them)");
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
