//! `troupe doctor`: checks Troupe's own files and explains how to recover.
//!
//! Today: the thread index and the rollouts. `--reindex` sets the index aside (never deleting
//! it) and rebuilds it from the rollout files.

use anyhow::{Context, Result};
use clap::Args;
use std::path::Path;
use troupe_actors::rollout_recorder::loader;
use troupe_actors::thread_store::{reconcile, state_dir, StoreError, ThreadStore};
use troupe_cli::output::line;
use troupe_cli::threads::{open_store, Reconcile};

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Rebuild the thread index from the rollout files (the old one is kept aside).
    #[arg(long)]
    reindex: bool,
}

/// Runs the checks; the exit status is failure when something needs the user.
pub fn run(home: &Path, args: DoctorArgs) -> Result<bool> {
    let mut healthy = true;
    if args.reindex {
        let state = state_dir(home);
        if state.exists() {
            // Refuse while another troupe uses the index: it would go on writing the old one.
            if let Err(err @ StoreError::Locked { .. }) = ThreadStore::open(home) {
                anyhow::bail!("{err}; stop it, then run `troupe doctor --reindex` again");
            }
            let aside = home.join(format!(
                "state.old-{}",
                chrono::Utc::now().format("%Y%m%dT%H%M%S%3f")
            ));
            std::fs::rename(&state, &aside).with_context(|| {
                format!(
                    "cannot move {} aside (is another troupe running?)",
                    state.display()
                )
            })?;
            line(format_args!(
                "moved the old index to {} (delete it once you are happy)",
                aside.display()
            ))?;
        }
        let store = ThreadStore::open(home)?;
        let report = reconcile::reconcile(&store, home)?;
        line(format_args!(
            "index rebuilt: {} thread(s) from {} rollout file(s)",
            report.refreshed, report.files
        ))?;
        healthy &= report.unreadable.is_empty();
        for problem in report.unreadable {
            line(format_args!("problem: {problem}"))?;
        }
        return Ok(healthy);
    }
    match open_store(home, Reconcile::Run) {
        Some(store) => line(format_args!(
            "thread index {}: ok ({} threads)",
            store.path().display(),
            store.all()?.len()
        ))?,
        None => {
            healthy = false;
            line("thread index: unavailable (the warning above says why and what to do)")?;
        }
    }
    // The sandbox commands would get here, and what it leaves unprotected.
    let configured = troupe_config::resolve::load_config(home, &Default::default())
        .map(|loaded| loaded.settings.sandbox.backend);
    match configured {
        Ok(kind) => line(format_args!(
            "sandbox: {}",
            troupe_sandbox::probe::describe(kind)
        ))?,
        Err(err) => line(format_args!("sandbox: not checked (config: {err})"))?,
    }
    for path in reconcile::rollout_files(home) {
        match loader::load(&path) {
            Ok(rollout) => {
                for warning in &rollout.warnings {
                    if rollout.damaged.contains(warning) {
                        healthy = false;
                        line(format_args!("problem: {warning}"))?;
                    } else {
                        line(format_args!("note: {warning}"))?;
                    }
                }
                if let Err(err) = loader::check_writable(&rollout) {
                    line(format_args!("problem: {err}"))?;
                }
            }
            Err(err) => {
                healthy = false;
                line(format_args!("problem: {err}"))?;
            }
        }
    }
    Ok(healthy)
}
