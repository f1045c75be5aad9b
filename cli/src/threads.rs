//! Thread commands: `list`, `fork`, `archive`, `unarchive`, `delete`, and opening the index.

use crate::output::line;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::sync::Arc;
use troupe_actors::thread_store::{ops, reconcile, StoreError, ThreadStore};
use troupe_messages::threads::ThreadSummary;

/// Whether to bring the index in line with the files after opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconcile {
    Run,
    Skip,
}

/// Opens the index; when another process holds it or it is damaged, says so and goes on
/// without it (every command works from the rollout files alone).
pub fn open_store(home: &Path, reconcile_now: Reconcile) -> Option<Arc<ThreadStore>> {
    let store = match ThreadStore::open(home) {
        Ok(store) => store,
        Err(err) => {
            if !matches!(err, StoreError::Locked { .. }) || std::env::var_os("RUST_LOG").is_some() {
                eprintln!("warning: {err}");
            }
            return None;
        }
    };
    if reconcile_now == Reconcile::Run {
        match reconcile::reconcile(&store, home) {
            Ok(report) => {
                for problem in report.unreadable {
                    eprintln!("warning: {problem}");
                }
            }
            Err(err) => {
                eprintln!("warning: {err}");
                return None;
            }
        }
    }
    Some(Arc::new(store))
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Include archived threads.
    #[arg(long)]
    all: bool,
    /// Only threads started in this directory (default: the current one).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".")]
    cwd: Option<std::path::PathBuf>,
    /// One JSON object per thread.
    #[arg(long)]
    json: bool,
    /// Show sub-agents indented under the thread that spawned them.
    #[arg(long)]
    tree: bool,
}

/// `troupe list`.
pub fn list(home: &Path, args: ListArgs) -> Result<()> {
    let threads = match open_store(home, Reconcile::Run) {
        Some(store) => store.list()?,
        None => {
            let (threads, unreadable) = reconcile::scan(home);
            for problem in unreadable {
                eprintln!("warning: {problem}");
            }
            threads
        }
    };
    let cwd = match &args.cwd {
        Some(dir) => Some(
            std::fs::canonicalize(dir)
                .with_context(|| format!("--cwd {}: not a directory", dir.display()))?,
        ),
        None => None,
    };
    let shown: Vec<ThreadSummary> = threads
        .into_iter()
        .filter(|t| args.all || !t.archived)
        .filter(|t| cwd.as_ref().is_none_or(|c| &t.cwd == c))
        .collect();
    let ordered: Vec<(usize, &ThreadSummary)> = if args.tree {
        crate::threads_tree::tree_order(&shown)
    } else {
        shown.iter().map(|t| (0, t)).collect()
    };
    for (depth, thread) in ordered {
        if args.json {
            line(serde_json::to_string(thread)?)?;
        } else {
            // Titles and paths come from rollouts (the model's words, a command's cwd).
            line(troupe_messages::terminal_text::visible(
                &crate::threads_tree::tree_line(depth, thread, human_line(thread)),
            ))?;
        }
    }
    Ok(())
}

fn human_line(t: &ThreadSummary) -> String {
    let updated = chrono::DateTime::from_timestamp_millis(t.updated_at_ms)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default();
    let archived = if t.archived { " [archived]" } else { "" };
    format!(
        "{}  {updated}  {:<11} {}{archived}  ({})",
        t.id,
        t.status.as_str(),
        t.title,
        t.cwd.display()
    )
}

#[derive(Debug, Args)]
pub struct ForkArgs {
    /// Thread id (or a unique prefix).
    pub id: String,
    /// Copy the history through this turn (default: all of it).
    #[arg(long = "at-turn", value_name = "N")]
    pub at_turn: Option<u64>,
}

/// `troupe fork`.
pub fn fork(home: &Path, args: ForkArgs) -> Result<()> {
    let store = open_store(home, Reconcile::Skip);
    let forked = ops::fork(home, store.as_deref(), &args.id, args.at_turn)?;
    line(forked.id)?;
    eprintln!(
        "forked into {} (continue it with `troupe exec resume {} PROMPT`)",
        forked.rollout_path.display(),
        forked.id
    );
    Ok(())
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// Thread id (or a unique prefix).
    id: String,
}

/// `troupe archive`.
pub fn archive(home: &Path, args: IdArg) -> Result<()> {
    let store = open_store(home, Reconcile::Skip);
    let done = ops::archive(home, store.as_deref(), &args.id)?;
    line(format_args!(
        "archived {} → {}",
        done.id,
        done.rollout_path.display()
    ))?;
    Ok(())
}

/// `troupe unarchive`.
pub fn unarchive(home: &Path, args: IdArg) -> Result<()> {
    let store = open_store(home, Reconcile::Skip);
    let done = ops::unarchive(home, store.as_deref(), &args.id)?;
    line(format_args!(
        "unarchived {} → {}",
        done.id,
        done.rollout_path.display()
    ))?;
    Ok(())
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Thread id (or a unique prefix).
    id: String,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    yes: bool,
}

/// `troupe delete`.
pub fn delete(home: &Path, args: DeleteArgs) -> Result<()> {
    let store = open_store(home, Reconcile::Skip);
    if !args.yes {
        let target = ops::find(home, store.as_deref(), &args.id)?;
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            bail!("not deleting without confirmation: pass --yes");
        }
        eprint!(
            "delete thread {} ({}) and its rollout {}? [y/N] ",
            target.id,
            target.title,
            target.rollout_path.display()
        );
        let mut answer = String::new();
        stdin.lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            bail!("not deleted");
        }
    }
    let done = ops::delete(home, store.as_deref(), &args.id)?;
    line(format_args!(
        "deleted {} ({})",
        done.id,
        done.rollout_path.display()
    ))?;
    Ok(())
}
