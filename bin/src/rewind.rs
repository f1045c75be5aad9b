//! `troupe rewind THREAD --to-turn N [--code|--conversation|--both] [--dry-run] [--force]`
//! and `troupe rewind THREAD --undo`: the work tree and/or the conversation back to before
//! turn N ([`troupe_actors::thread_store::rewind`]).

use anyhow::{bail, Result};
use clap::Args;
use std::path::Path;
use troupe_actors::session::checkpoints;
use troupe_actors::thread_store::rewind::{self, RewindOutcome, RewindRequest};
use troupe_cli::threads::{open_store, Reconcile};
use troupe_config::resolve::{load_settings, CliOverrides};

#[derive(Debug, Args)]
pub struct RewindArgs {
    /// Thread id (or a unique prefix).
    pub thread: String,
    /// Go back to the state before this turn (turns N and later are undone).
    #[arg(long = "to-turn", value_name = "N", required_unless_present = "undo")]
    pub to_turn: Option<u64>,
    /// Undo the last rewind of the thread (the tree and conversation it replaced).
    #[arg(long, conflicts_with = "to_turn")]
    pub undo: bool,
    /// Only the work tree.
    #[arg(long, conflicts_with_all = ["conversation", "both"])]
    pub code: bool,
    /// Only the conversation.
    #[arg(long, conflicts_with = "both")]
    pub conversation: bool,
    /// The work tree and the conversation (the default).
    #[arg(long)]
    pub both: bool,
    /// Print what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Rewind even though files changed since the last turn by something other than the
    /// agent (those changes are lost, but `--undo` brings them back).
    #[arg(long)]
    pub force: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `troupe rewind`.
pub fn run(home: &Path, args: RewindArgs) -> Result<()> {
    let settings = load_settings(home, &CliOverrides::default())?;
    let (code, conversation) = match (args.code, args.conversation) {
        (true, false) => (true, false),
        (false, true) => (false, true),
        _ => (true, true),
    };
    let request = RewindRequest {
        thread: args.thread.clone(),
        to_turn: if args.undo { None } else { args.to_turn },
        code,
        conversation,
        dry_run: args.dry_run,
        force: args.force,
        options: checkpoints::options(&settings, true),
    };
    let store = open_store(home, Reconcile::Skip);
    let outcome = rewind::rewind(home, store.as_deref(), &request)?;
    if args.json {
        println!("{}", serde_json::to_string(&outcome)?);
    } else {
        print_human(&outcome);
    }
    if outcome.code.as_ref().is_some_and(|c| !c.failed.is_empty()) {
        bail!("some files could not be restored (listed above)");
    }
    Ok(())
}

fn print_human(outcome: &RewindOutcome) {
    let verb = if outcome.dry_run { "would" } else { "did" };
    if let Some(code) = &outcome.code {
        if code.changes.is_empty() {
            println!("work tree: nothing to change");
        }
        for change in &code.changes {
            println!("{} {}", change.kind.symbol(), change.full_path().display());
        }
        for (path, why) in &code.failed {
            println!("! {}: {why}", path.display());
        }
        for dir in &code.kept_dirs {
            println!(
                "kept {} (it holds files checkpoints do not cover)",
                dir.display()
            );
        }
        for (root, skipped) in &code.not_covered {
            let path = root.join(&skipped.path);
            println!("not covered: {}: {}", path.display(), skipped.reason);
        }
        eprintln!(
            "{verb} restore {} path(s); files .gitignore ignores, .git and .troupe are not covered",
            code.changes.len()
        );
    }
    if let Some(conversation) = &outcome.conversation {
        eprintln!(
            "conversation: {verb} go from {} turn(s) to {}",
            conversation.turns_before, conversation.turns_after
        );
    }
    if !outcome.dry_run {
        eprintln!("undo with `troupe rewind {} --undo`", outcome.thread_id);
    }
}
