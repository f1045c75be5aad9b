//! `troupe exec --remote`: the whole thread runs on a worker of the pool. This process
//! publishes the spawn request, follows the thread's subject by stream sequence (resuming
//! after the last sequence seen across reconnects), renders the events exactly as a local
//! `exec` does, mirrors the rollout into its own `TROUPE_HOME` (so `list` and `resume` work
//! on the thread), and sends Ctrl-C to the worker as a request.

use super::human::HumanOutput;
use super::json_events::JsonOutput;
use super::render::EventRenderer;
use super::signals::{self, StopSignal, StopSignals};
use super::warn_plain;
use super::ExecArgs;
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::ExitCode;
use troupe_actors::agents::git_workspace::{bring_back, drop_base_ref, push_base, BasePushed};
use troupe_cli::output::warn;
use troupe_cluster::follow::ThreadFollower;
use troupe_cluster::mirror::RolloutMirror;
use troupe_cluster::sign::{ThreadKeys, ThreadSecret};
use troupe_cluster::spawn::{request_spawn, thread_request};
use troupe_cluster::wire::{End, Kind, SpawnRequest, ThreadRequest};
use troupe_cluster::{Cluster, ClusterOptions};
use troupe_messages::cluster::{ClusterConfig, Workspace};
use troupe_messages::events::{Event, EventMsg};
use troupe_messages::ops::UserInput;

/// Runs the task on a worker of the pool.
#[allow(
    clippy::too_many_lines,
    reason = "a sequence of stages that read best in order; split when it grows"
)]
pub async fn run(args: ExecArgs) -> Result<ExitCode> {
    refuse_local_only(&args)?;
    let home = troupe_config::home::troupe_home()?;
    let cwd = match args.flags.cd_dir()? {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    args.flags.check_git_repo(&cwd)?;
    let prompt = super::prompt_input::read_prompt(args.prompt.as_deref())?;
    let (config, history) = args.flags.load_cluster(&home, cwd.clone())?;
    let options = ClusterOptions::from_config(&config, None)?;
    let deadline = options.spawn_deadline;
    let cluster = Cluster::connect(options, "troupe-exec").await?;
    if let Some(warning) = cluster.anonymous_warning() {
        warn(warning);
    }
    // The thread's secret: only this process and the worker that takes the request know
    // it, and every message of the thread is checked against it.
    let secret = ThreadSecret::generate()?;
    let keys = ThreadKeys::from_secret(&secret);
    let mut signals = StopSignals::install().context("cannot catch SIGINT/SIGTERM/SIGHUP")?;
    let request_id = uuid::Uuid::now_v7().simple().to_string();
    let git = git_base(&config, &cwd, &request_id).await?;
    let request = SpawnRequest {
        request_id,
        cwd,
        items: vec![UserInput::Text {
            text: prompt.clone(),
        }],
        secret: secret.to_hex(),
        deadline_ms: troupe_cluster::now_ms()
            + i64::try_from(deadline.as_millis()).unwrap_or(i64::MAX / 2),
        agent: None,
        workspace: git.as_ref().map(|pushed| pushed.workspace.clone()),
    };
    let answer = tokio::select! {
        answer = request_spawn(&cluster, &request) => answer,
        signal = signals.next() => {
            forget_base(git.as_ref());
            return Ok(signal.exit_code());
        }
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(err) => {
            forget_base(git.as_ref());
            return Err(err.into());
        }
    };
    let thread_id = answer.thread_id.unwrap_or_default();
    let mut follower = ThreadFollower::new(&cluster, &thread_id, keys.clone())?;
    let mut renderer: Box<dyn EventRenderer> = if args.json {
        Box::new(JsonOutput::default())
    } else {
        Box::new(HumanOutput::new(prompt.clone(), args.color.enabled()))
    };
    let mut mirror = RolloutMirror::new(&home);
    let mut last_message = None;
    let mut succeeded = false;
    let mut turn_over = false;
    let mut stopped: Option<StopSignal> = None;
    let outcome = loop {
        let message = tokio::select! {
            message = follower.next() => {
                for dropped in follower.take_dropped() {
                    warn(format!("ignored a message not from the thread's worker: {dropped}"));
                }
                message?
            }
            signal = signals.next() => {
                if let Some(first) = stopped {
                    return Ok(signals::give_up(first));
                }
                stopped = Some(signal);
                warn(format!(
                    "{} received: interrupting the turn on the worker (send it again to stop at once)",
                    signal.name()
                ));
                if let Err(err) = thread_request(&cluster, &thread_id, &keys, &ThreadRequest::Interrupt).await {
                    warn(format!("the interrupt did not reach the worker: {err}"));
                }
                continue;
            }
        };
        match message.kind {
            Kind::Event => {
                let event: Event = serde_json::from_slice(&message.payload).with_context(|| {
                    format!("event {} of thread {thread_id} is malformed", message.seq)
                })?;
                // As a local `exec`: nothing is shown after the turn's end.
                if turn_over {
                    continue;
                }
                renderer.render(&event.msg)?;
                if let EventMsg::SessionConfigured { thread_id, .. } = &event.msg {
                    // As a local `exec`: the prompt goes into this machine's history.
                    if let Err(err) = troupe_cli::history::record(
                        &home,
                        &history,
                        &thread_id.to_string(),
                        &prompt,
                    ) {
                        warn(format!("the prompt history was not saved: {err:#}"));
                    }
                }
                if let Some(what) = approval_subject(&event.msg) {
                    warn(format!(
                        "{what} needs approval, which nobody can give on a worker: denied (the \
                         worker's own approval_policy and sandbox_mode decide what runs without \
                         asking)"
                    ));
                }
                if let EventMsg::TurnComplete {
                    last_agent_message, ..
                } = event.msg
                {
                    last_message = last_agent_message;
                    succeeded = true;
                    turn_over = true;
                } else if let EventMsg::TurnAborted { .. } = event.msg {
                    turn_over = true;
                }
            }
            Kind::Rollout => {
                let line =
                    std::str::from_utf8(&message.payload).context("a rollout line is not UTF-8")?;
                mirror.append(message.rollout_path.as_deref(), line)?;
            }
            Kind::End => {
                let end: End = serde_json::from_slice(&message.payload)
                    .context("the thread's end message is malformed")?;
                succeeded = succeeded && end.succeeded;
                break end.workspace;
            }
        }
    };
    index_mirror(&mirror, &home);
    if let Some(pushed) = &git {
        // As `exec --worktree`: where the work is, on stderr; a branch that did not come
        // back fails the run.
        let (pushed, outcome) = (pushed.clone(), outcome.clone());
        let brought = tokio::task::spawn_blocking(move || bring_back(&pushed, outcome.as_ref()))
            .await
            .unwrap_or_else(|err| Err(format!("the branch was not fetched: {err}")));
        match brought {
            Ok(text) => warn_plain(text),
            Err(text) => {
                warn(text);
                succeeded = false;
            }
        }
    }
    crate::ending::finish(
        &args,
        crate::ending::RunEnd {
            last_message,
            succeeded,
            stopped,
            ..Default::default()
        },
    )
}

/// With `[cluster] workspace = "git"`: HEAD pushed to `git_remote` for the worker, and a
/// warning for the changes it does not carry. The directory must be in a Git repository
/// whatever `--skip-git-repo-check` says: the commit is the workspace.
async fn git_base(
    config: &ClusterConfig,
    cwd: &Path,
    request_id: &str,
) -> Result<Option<BasePushed>> {
    match config.workspace.unwrap_or_default() {
        Workspace::Shared => Ok(None),
        Workspace::Git => {
            let remote = config.git_remote.clone().unwrap_or_default();
            let (cwd, id) = (cwd.to_path_buf(), request_id.to_string());
            let pushed = tokio::task::spawn_blocking(move || push_base(&cwd, remote.as_str(), &id))
                .await
                .context("the push task stopped")?
                .map_err(|err| anyhow::anyhow!("--remote: {err}"))?;
            if let Some(note) = pushed.uncommitted_note() {
                warn(note);
            }
            Ok(Some(pushed))
        }
    }
}

/// The base ref of a request that never ran, deleted from the remote.
fn forget_base(git: Option<&BasePushed>) {
    if let Some(pushed) = git {
        if let Err(err) = drop_base_ref(pushed) {
            warn(format!("the base commit's ref stays on the remote: {err}"));
        }
    }
}

/// What an approval request asks for, as the local `exec` names it.
fn approval_subject(msg: &EventMsg) -> Option<String> {
    if let EventMsg::ExecApprovalRequest { command, .. } = msg {
        return Some(format!("`{}`", super::json_events::command_line(command)));
    }
    if let EventMsg::ApplyPatchApprovalRequest { files, .. } = msg {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        return Some(format!("a patch to {}", names.join(", ")));
    }
    None
}

/// What a remote run cannot do yet: said before anything starts, never silently dropped.
fn refuse_local_only(args: &ExecArgs) -> Result<()> {
    let mut refused: Vec<&str> = args.flags.session_shaping();
    let options: [(&str, bool); 10] = [
        ("resume/review", args.command.is_some()),
        ("--image", !args.images.is_empty()),
        ("--goal", args.goal.is_some()),
        ("--worktree", args.worktree),
        ("--ephemeral", args.ephemeral),
        ("--output-schema", args.output_schema.is_some()),
        ("--add-dir", !args.add_dir.is_empty()),
        ("--ignore-rules", args.ignore_rules),
        ("--trust", args.trust),
        (
            "-c (other than cluster.*)",
            args.flags
                .config
                .iter()
                .any(|c| !c.trim_start().starts_with("cluster.")),
        ),
    ];
    refused.extend(
        options
            .iter()
            .filter(|(_, set)| *set)
            .map(|(name, _)| *name),
    );
    if !refused.is_empty() {
        bail!(
            "--remote runs the thread under the worker's configuration and cannot take {}",
            refused.join(", ")
        );
    }
    Ok(())
}

/// Puts the mirrored thread in this home's thread index (`troupe list`).
fn index_mirror(mirror: &RolloutMirror, home: &Path) {
    let Some(path) = mirror.path() else {
        return;
    };
    mirror.sync();
    let Some(store) = troupe_cli::threads::open_store(home, troupe_cli::threads::Reconcile::Skip)
    else {
        return;
    };
    match troupe_actors::thread_store::reconcile::summarize_file(home, path) {
        Ok(summary) => {
            if let Err(err) = store.put(&summary) {
                warn(format!("the mirrored thread was not indexed: {err}"));
            }
        }
        Err(err) => warn(format!(
            "the mirrored rollout {} cannot be read back: {err}",
            path.display()
        )),
    }
}
