//! One thread on a worker: started in its own `Runtime`, its events and rollout lines
//! appended to the thread's subject under its lease, interrupts taken from the thread's ops
//! subject. A lost lease (`Fenced`) stops the thread here at once: nothing more is
//! published for it.

use super::answers::{
    answer_event, forwarded_request, handle_op, Approvals, Turn, APPROVAL_PATIENCE,
};
use super::rollout_tail::RolloutTail;
use super::workspace::{self, Delivery};
use anyhow::{bail, Context, Result};
use futures::StreamExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_cli::session_flags::SessionFlags;
use troupe_cluster::layout::spawn_key;
use troupe_cluster::lease::Lease;
use troupe_cluster::publish::ThreadPublisher;
use troupe_cluster::sign::{ThreadKeys, ThreadSecret};
use troupe_cluster::wire::{End, Kind, SpawnAnswer, SpawnRequest, WorkspaceOutcome};
use troupe_cluster::{Cluster, ClusterError};
use troupe_messages::events::{Event, EventMsg};
use troupe_messages::mailboxes::AgentStart;
use troupe_messages::ops::{Op, ReviewDecision};
use troupe_messages::policy::AskForApproval;

/// What every thread of a worker shares.
pub struct WorkerContext {
    pub cluster: Cluster,
    pub worker_id: String,
    /// The worker's `TROUPE_HOME`: its config, rules and credentials apply to every thread.
    pub home: PathBuf,
    pub flags: SessionFlags,
    pub approval: AskForApproval,
    /// The workers' bucket of thread secrets (a thread taken over is verified with it).
    pub secrets: async_nats::jetstream::kv::Store,
    /// `[cluster] worker_roots`, symlinks resolved: where shared-workspace threads may run.
    pub roots: Vec<PathBuf>,
}

/// How long an append may retry through a reconnect before the thread is given up.
pub(super) const APPEND_PATIENCE: Duration = Duration::from_secs(60);
/// How often a quiet turn's rollout is looked at for lines written after its last event.
const ROLLOUT_POLL: Duration = Duration::from_millis(50);
/// How long the session may take to shut down after its turn.
const SHUTDOWN_PATIENCE: Duration = Duration::from_secs(10);
/// Runs the thread `request` asks for, answering the request first.
pub async fn run(ctx: Arc<WorkerContext>, request: SpawnRequest) -> Result<()> {
    let answer_key = spawn_key(&request.request_id);
    let admitted = ThreadSecret::from_hex(&request.secret)
        .map_err(|err| anyhow::anyhow!("the spawn request carries no usable thread secret: {err}"))
        .and_then(|secret| {
            let cwd = match request.workspace {
                None => Some(super::roots::check(&ctx.roots, &request.cwd)?),
                Some(_) => None,
            };
            Ok((secret, cwd))
        });
    let (secret, shared_cwd) = match admitted {
        Ok(admitted) => admitted,
        Err(err) => {
            answer(&ctx, &answer_key, None, Some(format!("{err:#}"))).await;
            return Err(err);
        }
    };
    let delivery = match workspace::for_request(&ctx.home, &request).await {
        Ok(delivery) => delivery,
        Err(err) => {
            answer(&ctx, &answer_key, None, Some(format!("{err:#}"))).await;
            return Err(err);
        }
    };
    let cwd = match (&delivery, shared_cwd) {
        (Some(delivery), _) => delivery.checkout.worktree.cwd.clone(),
        (None, Some(resolved)) => resolved,
        (None, None) => request.cwd.clone(),
    };
    let started = start(&ctx, &request, cwd.clone()).await;
    let (runtime, thread, rollout_dir) = match started {
        Ok(started) => started,
        Err(err) => {
            if let Some(delivery) = delivery {
                workspace::discard(delivery).await;
            }
            answer(&ctx, &answer_key, None, Some(format!("{err:#}"))).await;
            return Err(err);
        }
    };
    let thread_id = thread.handle.thread_id.to_string();
    let started = Started {
        thread,
        rollout_dir,
        cwd,
        delivery,
        secret,
    };
    let result = follow(&ctx, &request, started, &answer_key, &thread_id).await;
    runtime.stop();
    match result {
        Err(err) if matches!(err.downcast_ref(), Some(ClusterError::Fenced { .. })) => {
            eprintln!(
                "worker {}: lost the lease of thread {thread_id}; stopped it here",
                ctx.worker_id
            );
            Ok(())
        }
        other => other,
    }
}

/// A thread started here, and where it works.
struct Started {
    thread: ThreadClient,
    rollout_dir: PathBuf,
    cwd: PathBuf,
    delivery: Option<Delivery>,
    secret: ThreadSecret,
}

async fn start(
    ctx: &WorkerContext,
    request: &SpawnRequest,
    cwd: PathBuf,
) -> Result<(Runtime, ThreadClient, PathBuf)> {
    let loaded = ctx.flags.load(&ctx.home, cwd, ctx.approval).await?;
    let mut settings = loaded.settings;
    // Each thread's rollouts in a directory of its own under the worker's home.
    let rollout_dir = ctx
        .home
        .join("cluster")
        .join("threads")
        .join(&request.request_id);
    tokio::fs::create_dir_all(&rollout_dir)
        .await
        .with_context(|| format!("cannot create {}", rollout_dir.display()))?;
    settings.rollout_dir = Some(rollout_dir.clone());
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools()).await?;
    let thread = match &request.agent {
        None => runtime.start_thread(settings).await?,
        Some(agent) => {
            // A sub-agent of a thread elsewhere: its depth counts towards this worker's own
            // `[agents] max_depth` (the worker's limits win, as its permissions do).
            if agent.meta.depth > settings.agents.max_depth {
                bail!(
                    "sub-agent `{}` would be at depth {}, beyond this worker's agents.max_depth {}",
                    agent.meta.task_path,
                    agent.meta.depth,
                    settings.agents.max_depth
                );
            }
            settings.agents.depth = agent.meta.depth;
            settings.agents.task_path = agent.meta.task_path.clone();
            let start = AgentStart {
                parent_thread_id: agent.parent_thread_id,
                meta: agent.meta.clone(),
                forked_history: None,
            };
            runtime.start_agent_thread(settings, start).await?
        }
    };
    Ok((runtime, thread, rollout_dir))
}

async fn answer(ctx: &WorkerContext, key: &str, thread_id: Option<String>, error: Option<String>) {
    let answer = SpawnAnswer {
        worker: ctx.worker_id.clone(),
        thread_id,
        error,
    };
    let Ok(value) = serde_json::to_vec(&answer) else {
        return;
    };
    if let Err(err) = ctx.cluster.kv.put(key, value.into()).await {
        tracing::warn!(%err, "cannot answer the spawn request");
    }
}

async fn follow(
    ctx: &WorkerContext,
    request: &SpawnRequest,
    started: Started,
    answer_key: &str,
    thread_id: &str,
) -> Result<()> {
    let Started {
        mut thread,
        rollout_dir,
        cwd,
        delivery,
        secret,
    } = started;
    let lease = Lease::acquire(
        &ctx.cluster.kv,
        thread_id,
        &ctx.worker_id,
        &cwd,
        request.workspace.as_ref(),
    )
    .await?;
    // Kept before anything is published: a worker taking the thread over needs it.
    troupe_cluster::secrets::put(&ctx.secrets, thread_id, &secret).await?;
    let keys = ThreadKeys::from_secret(&secret);
    let publisher =
        ThreadPublisher::new(&ctx.cluster, lease, &ctx.worker_id, (0, 0), keys.clone())?;
    let ops = subscribe_ops(ctx, thread_id).await?;
    answer(ctx, answer_key, Some(thread_id.to_string()), None).await;
    thread.submit(Op::UserInput {
        items: request.items.clone(),
    })?;
    let relative = relative_rollout(&thread, &rollout_dir)?;
    let tail = RolloutTail::new(thread.handle.rollout_path.clone());
    let pumped = Pumped {
        thread,
        publisher,
        tail,
        relative,
        ops,
        // A new thread's start is news to its follower.
        skip_session_configured: false,
        approvals: Approvals::of(request.agent.as_ref().map(|a| &a.meta)),
        delivery,
        keys,
    };
    pump(ctx, pumped).await
}

/// The thread's rollout path relative to its directory (the follower's mirror uses it).
pub(super) fn relative_rollout(
    thread: &ThreadClient,
    rollout_dir: &std::path::Path,
) -> Result<String> {
    Ok(thread
        .handle
        .rollout_path
        .strip_prefix(rollout_dir)
        .context("the rollout is outside the thread's directory")?
        .display()
        .to_string())
}

pub(super) async fn subscribe_ops(
    ctx: &WorkerContext,
    thread_id: &str,
) -> Result<async_nats::Subscriber> {
    ctx.cluster
        .client
        .subscribe(ctx.cluster.layout().ops_subject(thread_id)?)
        .await
        .context("cannot subscribe to the thread's ops")
}

/// A running thread and where its output goes.
pub(super) struct Pumped {
    pub thread: ThreadClient,
    pub publisher: ThreadPublisher,
    pub tail: RolloutTail,
    pub relative: String,
    pub ops: async_nats::Subscriber,
    /// A thread taken over: its follower saw its start from the first worker.
    pub skip_session_configured: bool,
    pub approvals: Approvals,
    /// A git workspace, delivered (committed, pushed, removed) once the turn is over.
    pub delivery: Option<Delivery>,
    /// The thread's keys: ops are checked with them, replies signed.
    pub keys: ThreadKeys,
}

/// Publishes the thread's events and rollout lines until its turn ends, then shuts it down,
/// publishes the last rollout lines and the end, and gives the lease up.
pub(super) async fn pump(ctx: &WorkerContext, pumped: Pumped) -> Result<()> {
    let Pumped {
        mut thread,
        mut publisher,
        mut tail,
        relative,
        mut ops,
        skip_session_configured,
        approvals,
        delivery,
        keys,
    } = pumped;
    let ran = run_turn(
        ctx,
        Running {
            thread: &mut thread,
            publisher: &mut publisher,
            tail: &mut tail,
            relative: &relative,
            ops: &mut ops,
            keys: &keys,
        },
        skip_session_configured,
        approvals,
    )
    .await;
    let succeeded = match ran {
        Ok(succeeded) => succeeded,
        // Another worker owns the thread: not one more message.
        Err(err) if matches!(err.downcast_ref(), Some(ClusterError::Fenced { .. })) => {
            if let Some(delivery) = &delivery {
                eprintln!(
                    "worker {}: the thread's worktree stays at {} (another worker holds it)",
                    ctx.worker_id,
                    delivery.checkout.worktree.root.display()
                );
            }
            return Err(err);
        }
        Err(err) => {
            // The follower learns that the thread failed here rather than waiting on it.
            let _ = thread.submit(Op::Interrupt);
            let warning = Event {
                id: String::new(),
                msg: EventMsg::Warning {
                    message: format!("the worker stopped the thread: {err:#}"),
                },
            };
            if let Ok(payload) = serde_json::to_vec(&warning) {
                let _ = publisher.append(Kind::Event, payload, None).await;
            }
            let end = End {
                succeeded: false,
                workspace: delivered(ctx, delivery).await,
            };
            if let Ok(end) = serde_json::to_vec(&end) {
                let _ = publisher.append(Kind::End, end, None).await;
            }
            finish(ctx, publisher).await;
            return Err(err);
        }
    };
    // Flush the rollout: the session's shutdown writes and releases it.
    if thread.submit(Op::Shutdown).is_ok() {
        let drained = async { while thread.next_event().await.is_some() {} };
        let _ = tokio::time::timeout(SHUTDOWN_PATIENCE, drained).await;
    }
    publish_rollout(&mut publisher, &mut tail, &relative).await?;
    // The session is shut down: nothing writes in the worktree any more.
    let end = End {
        succeeded,
        workspace: delivered(ctx, delivery).await,
    };
    let end = serde_json::to_vec(&end).context("cannot serialize the end")?;
    publisher
        .append_retrying(Kind::End, end, None, APPEND_PATIENCE)
        .await?;
    finish(ctx, publisher).await;
    Ok(())
}

/// The thread is over: its secret and lease go.
pub(super) async fn finish(ctx: &WorkerContext, publisher: ThreadPublisher) {
    troupe_cluster::secrets::forget(&ctx.secrets, publisher.thread()).await;
    publisher.finish().await;
}

/// The git workspace's work pushed back, for the end message (none without one).
async fn delivered(ctx: &WorkerContext, delivery: Option<Delivery>) -> Option<WorkspaceOutcome> {
    match delivery {
        Some(delivery) => Some(workspace::deliver(delivery, &ctx.worker_id).await),
        None => None,
    }
}

/// A running thread's parts the turn loop uses.
struct Running<'a> {
    thread: &'a mut ThreadClient,
    publisher: &'a mut ThreadPublisher,
    tail: &'a mut RolloutTail,
    relative: &'a str,
    ops: &'a mut async_nats::Subscriber,
    keys: &'a ThreadKeys,
}

/// Publishes until the turn ends; whether it completed.
async fn run_turn(
    ctx: &WorkerContext,
    running: Running<'_>,
    skip_session_configured: bool,
    approvals: Approvals,
) -> Result<bool> {
    let Running {
        thread,
        publisher,
        tail,
        relative,
        ops,
        keys,
    } = running;
    let mut heartbeat = tokio::time::interval(ctx.cluster.options.lease_timeout / 3);
    // Forwarded approval requests still unanswered, with when the worker denies them.
    let mut pending: Vec<(String, tokio::time::Instant)> = Vec::new();
    // Nonces of the ops taken: one replayed is refused.
    let mut seen = std::collections::HashSet::new();
    let mut patience = tokio::time::interval(Duration::from_secs(1));
    // Lines the session writes after its last event (the call's line, written while its
    // command starts) would otherwise wait for the next event, which a long command holds
    // back: a worker lost meanwhile would leave the call uncommitted, and its successor
    // would run it again.
    let mut rollout_poll = tokio::time::interval(ROLLOUT_POLL);
    rollout_poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            event = thread.next_event() => {
                let Some(event) = event else { return Ok(false) };
                let configured = matches!(event.msg, EventMsg::SessionConfigured { .. });
                if !(configured && skip_session_configured) {
                    publish_event(publisher, &event).await?;
                }
                publish_rollout(publisher, tail, relative).await?;
                // Just looked: the poll is for a turn that has gone quiet.
                rollout_poll.reset();
                if let Some(call_id) = forwarded_request(approvals, &event) {
                    pending.push((call_id, tokio::time::Instant::now() + APPROVAL_PATIENCE));
                }
                match answer_event(thread, &event, approvals)? {
                    Turn::Goes => {}
                    Turn::Ended { completed } => return Ok(completed),
                }
            }
            Some(message) = ops.next() => {
                let mut op = super::answers::OpState { keys, pending: &mut pending, seen: &mut seen };
                handle_op(ctx, thread, message, &mut op).await;
            }
            _ = patience.tick() => {
                let now = tokio::time::Instant::now();
                for (call_id, _) in pending.iter().filter(|(_, at)| *at <= now) {
                    eprintln!(
                        "worker {}: no decision came for approval request {call_id} within {} s; denied",
                        ctx.worker_id,
                        APPROVAL_PATIENCE.as_secs()
                    );
                    thread.submit(Op::ExecApproval {
                        call_id: call_id.clone(),
                        decision: ReviewDecision::Denied,
                    })?;
                }
                pending.retain(|(_, at)| *at > now);
            }
            _ = rollout_poll.tick() => publish_rollout(publisher, tail, relative).await?,
            _ = heartbeat.tick() => match publisher.heartbeat().await {
                Err(err @ ClusterError::Fenced { .. }) => return Err(err.into()),
                Err(err) => tracing::debug!(%err, "lease not renewed (retrying at the next beat)"),
                Ok(()) => {}
            },
        }
    }
}

/// Appends one event; one larger than the server accepts goes as a warning saying so (the
/// rollout line of its item still carries what the model saw).
async fn publish_event(publisher: &mut ThreadPublisher, event: &Event) -> Result<()> {
    let payload = serde_json::to_vec(event).context("cannot serialize an event")?;
    let size = payload.len();
    match publisher
        .append_retrying(Kind::Event, payload, None, APPEND_PATIENCE)
        .await
    {
        Err(ClusterError::TooLarge { reason, .. }) => {
            let warning = Event {
                id: event.id.clone(),
                msg: EventMsg::Warning {
                    message: format!(
                        "an event of {size} bytes was not sent by the worker ({reason})"
                    ),
                },
            };
            let payload = serde_json::to_vec(&warning).context("cannot serialize an event")?;
            publisher
                .append_retrying(Kind::Event, payload, None, APPEND_PATIENCE)
                .await?;
            Ok(())
        }
        other => other.map(|_| ()).map_err(Into::into),
    }
}

/// Appends the rollout lines written since the last look, as one message.
pub(super) async fn publish_rollout(
    publisher: &mut ThreadPublisher,
    tail: &mut RolloutTail,
    relative: &str,
) -> Result<()> {
    let mut moved = std::mem::replace(tail, RolloutTail::new(PathBuf::new()));
    let (moved, lines) = tokio::task::spawn_blocking(move || {
        let lines = moved.read_new_lines();
        (moved, lines)
    })
    .await
    .context("the rollout reader stopped")?;
    *tail = moved;
    let lines = lines.with_context(|| format!("cannot read {}", tail.path().display()))?;
    if lines.is_empty() {
        return Ok(());
    }
    // One append for all of them (a message too large for the server goes in parts).
    publisher
        .append_retrying(
            Kind::Rollout,
            lines.join("\n").into_bytes(),
            Some(relative),
            APPEND_PATIENCE,
        )
        .await?;
    Ok(())
}
