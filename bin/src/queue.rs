//! `troupe queue --thread ID --message TEXT [--resume]`: leave a message for a thread that
//! another process is running (or that is closed). The message goes to the thread's inbox
//! under `$TROUPE_HOME/queue/`; the process holding the thread's rollout lock injects it at
//! the running turn's next sampling boundary, and a thread resumed later takes it as input
//! of its next turn (`troupe_actors::session::inbox`). With `--resume`, a thread no process
//! holds is resumed here at once with the message as its input (as `exec resume ID TEXT`).

use anyhow::{bail, Result};
use clap::Args;
use std::path::Path;
use std::process::ExitCode;
use troupe_actors::rollout_recorder::lock;
use troupe_actors::session::inbox;
use troupe_actors::thread_store::ops;
use troupe_cli::output::{line, warn};

#[derive(Debug, Args)]
pub struct QueueArgs {
    /// The thread: its id or a unique prefix of it (`troupe list` shows them).
    #[arg(long = "thread", value_name = "THREAD")]
    thread: String,
    /// The message to queue.
    #[arg(long = "message", value_name = "TEXT")]
    message: String,
    /// When no process is running the thread, resume it now with the message as input
    /// (as `troupe exec resume`); when one is, the message is only queued, with a warning.
    #[arg(long = "resume")]
    resume: bool,
}

pub async fn run(home: &Path, args: QueueArgs) -> Result<ExitCode> {
    let store = troupe_cli::threads::open_store(home, troupe_cli::threads::Reconcile::Skip);
    let thread = ops::find(home, store.as_deref(), &args.thread)
        .map_err(|err| anyhow::anyhow!("--thread {}: {err}", args.thread))?;
    // The index belongs to whoever resumes the thread next (maybe this process).
    drop(store);
    if thread.archived {
        bail!(
            "--thread {}: thread {} is archived; `troupe unarchive {}` first",
            args.thread,
            thread.id,
            thread.id
        );
    }
    if args.message.trim().is_empty() {
        bail!("--message: the message is empty");
    }
    let holder = lock::holder(&thread.rollout_path);
    if args.resume && holder.is_none() {
        eprintln!(
            "thread {} is not running: resuming it with the message",
            thread.id
        );
        let exec = troupe_exec::ExecArgs::for_resume(thread.id.to_string(), args.message);
        return troupe_exec::run(exec).await;
    }
    let id = inbox::enqueue(home, thread.id, &args.message)
        .map_err(|err| anyhow::anyhow!("--message: {err}"))?;
    line(format_args!(
        "Queued message {id} for thread {}.",
        thread.id
    ))?;
    match holder {
        Some(pid) if args.resume => warn(format!(
            "thread {} is running in process {pid}, so it was not resumed; that process \
             takes the message at its next sampling boundary",
            thread.id
        )),
        Some(pid) => eprintln!(
            "process {pid} is running the thread: it takes the message at its next sampling \
             boundary (or at its next turn)"
        ),
        None => eprintln!(
            "no process is running the thread: the message becomes input when it is resumed \
             (`troupe exec resume {}`)",
            thread.id
        ),
    }
    Ok(ExitCode::SUCCESS)
}
