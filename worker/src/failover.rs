//! Taking over the threads of a worker that died or hangs. Every worker watches the pool's
//! leases; one whose revision has not moved for the lease timeout (by this worker's own
//! clock) is taken over with a compare-and-set, when this worker has a free slot. The new
//! holder rebuilds the thread's rollout from the committed lines on its subject, closes the
//! tool calls that were in flight with an "aborted: worker lost" output, resumes the thread
//! in a runtime of its own and carries the turn on to its end.

use super::rollout_tail::RolloutTail;
use super::thread::{self, Pumped, WorkerContext, APPEND_PATIENCE};
use super::workspace;
use anyhow::{bail, Context, Result};
use futures::StreamExt;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_cluster::follow::ThreadFollower;
use troupe_cluster::lease::{Lease, LeaseWatch};
use troupe_cluster::publish::ThreadPublisher;
use troupe_cluster::sign::ThreadKeys;
use troupe_cluster::wire::{End, Kind, LeaseRecord};
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::rollout::{RolloutLine, RolloutRecord};

/// What the tool calls in flight on a lost worker get as their output.
pub const WORKER_LOST: &str = "aborted: worker lost";
/// The input that carries a taken-over turn on (the model sees why its call was aborted).
const CARRY_ON: &str = "The worker running this thread was lost; the tool calls in flight were \
aborted. Carry on with the task.";

/// Watches the leases for ever, taking over expired ones while slots are free.
pub async fn monitor(ctx: Arc<WorkerContext>, slots: Arc<Semaphore>) {
    let timeout = ctx.cluster.options.lease_timeout;
    let mut tick = tokio::time::interval(timeout / 4);
    let mut watch = LeaseWatch::default();
    loop {
        tick.tick().await;
        if let Err(err) = scan(&ctx, &slots, &mut watch).await {
            tracing::debug!(%err, "lease scan failed");
        }
    }
}

async fn scan(
    ctx: &Arc<WorkerContext>,
    slots: &Arc<Semaphore>,
    watch: &mut LeaseWatch,
) -> Result<()> {
    let timeout = ctx.cluster.options.lease_timeout;
    let kv = &ctx.cluster.kv;
    let mut keys = kv.keys().await.context("lease keys")?;
    let mut present = HashSet::new();
    while let Some(key) = keys.next().await {
        let Ok(key) = key else { continue };
        if key.starts_with("lease.") {
            present.insert(key);
        }
    }
    watch.retain(&present);
    for key in present {
        let Ok(Some(entry)) = kv.entry(key.clone()).await else {
            continue;
        };
        if entry.operation != async_nats::jetstream::kv::Operation::Put {
            continue;
        }
        let Ok(record) = serde_json::from_slice::<LeaseRecord>(&entry.value) else {
            continue;
        };
        if record.worker == ctx.worker_id
            || !watch.expired(&key, entry.revision, Instant::now(), timeout)
        {
            continue;
        }
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let Some(thread_id) = key.strip_prefix("lease.") else {
            continue;
        };
        // Only a thread whose secret the workers kept (else nothing of it can be checked,
        // nor signed), in a directory this worker may work in.
        let secret = match troupe_cluster::secrets::get(&ctx.secrets, thread_id).await {
            Ok(Some(secret)) => secret,
            Ok(None) => {
                tracing::debug!(thread_id, "no secret kept for the thread; not taken over");
                continue;
            }
            Err(err) => {
                tracing::debug!(%err, thread_id, "thread secret unreadable");
                continue;
            }
        };
        if record.workspace.is_none() {
            // (The lease keeps the resolved directory its first worker checked.)
            if let Err(err) = super::roots::check(&ctx.roots, &record.cwd) {
                tracing::debug!(%err, thread_id, "not taken over here");
                continue;
            }
        }
        let keys = ThreadKeys::from_secret(&secret);
        let lease =
            match Lease::take_over(kv, thread_id, &ctx.worker_id, &record, entry.revision).await {
                Ok(lease) => lease,
                Err(err) => {
                    tracing::debug!(%err, thread_id, "take-over lost");
                    continue;
                }
            };
        eprintln!(
            "worker {}: took over thread {thread_id} from worker {}",
            ctx.worker_id, record.worker
        );
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let thread_id = lease.thread().to_string();
            if let Err(err) = resume(ctx, lease, keys, permit).await {
                eprintln!("taken-over thread {thread_id}: {err:#}");
            }
        });
    }
    Ok(())
}

/// What the subject holds of a thread: its committed rollout lines and where the rollout
/// lives, whether it ended, and its last sequence.
struct Committed {
    relative: Option<String>,
    lines: Vec<String>,
    ended: bool,
    last_seq: u64,
    /// The last message its worker signed (forged ones are skipped).
    last_signed: u64,
}

async fn read_committed(
    ctx: &WorkerContext,
    thread_id: &str,
    keys: &ThreadKeys,
) -> Result<Committed> {
    let mut follower = ThreadFollower::new(&ctx.cluster, thread_id, keys.clone())?;
    let mut committed = Committed {
        relative: None,
        lines: Vec::new(),
        ended: false,
        last_seq: 0,
        last_signed: 0,
    };
    let Some(last) = ThreadFollower::last_sequence(&ctx.cluster, thread_id).await? else {
        return Ok(committed);
    };
    committed.last_seq = last;
    let deadline = tokio::time::Instant::now() + APPEND_PATIENCE;
    while follower.cursor().last() < last {
        // A forged message at the very end is dropped and nothing follows it: the cursor
        // has passed it all the same.
        let next = tokio::time::timeout(std::time::Duration::from_secs(1), follower.next()).await;
        for dropped in follower.take_dropped() {
            eprintln!("worker {}: {dropped}", ctx.worker_id);
        }
        let message = match next {
            Ok(message) => message?,
            Err(_) if follower.cursor().last() >= last => break,
            Err(_) if tokio::time::Instant::now() >= deadline => {
                bail!("the thread's subject stopped before its last message")
            }
            Err(_) => continue,
        };
        match message.kind {
            Kind::Rollout => {
                committed.relative = message.rollout_path.clone();
                let lines =
                    std::str::from_utf8(&message.payload).context("a rollout line is not UTF-8")?;
                committed
                    .lines
                    .extend(lines.split('\n').map(str::to_string));
            }
            Kind::End => committed.ended = true,
            Kind::Event => {}
        }
    }
    committed.last_signed = follower.last_signed();
    Ok(committed)
}

async fn resume(
    ctx: Arc<WorkerContext>,
    lease: Lease,
    keys: ThreadKeys,
    permit: OwnedSemaphorePermit,
) -> Result<()> {
    let thread_id = lease.thread().to_string();
    let mut cwd = lease.cwd().to_path_buf();
    let git = lease.workspace().cloned();
    let committed = read_committed(&ctx, &thread_id, &keys).await?;
    let mut publisher = ThreadPublisher::new(
        &ctx.cluster,
        lease,
        &ctx.worker_id,
        (committed.last_seq, committed.last_signed),
        keys.clone(),
    )?;
    if committed.ended {
        thread::finish(&ctx, publisher).await;
        return Ok(());
    }
    let Some(relative) = committed.relative.clone() else {
        // Nothing of the thread was committed: there is nothing to resume.
        let end = serde_json::to_vec(&End {
            succeeded: false,
            workspace: None,
        })?;
        publisher
            .append_retrying(Kind::End, end, None, APPEND_PATIENCE)
            .await?;
        thread::finish(&ctx, publisher).await;
        bail!("thread {thread_id} had committed no rollout line; ended it");
    };
    // The calls in flight get their output now, and the lost turn its end, committed before
    // anything else.
    let mut lines = committed.lines;
    let mut closing = lost_call_outputs(&lines)?;
    closing.extend(lost_turn_end(&lines)?);
    for line in closing {
        publisher
            .append_retrying(
                Kind::Rollout,
                line.clone().into_bytes(),
                Some(&relative),
                APPEND_PATIENCE,
            )
            .await?;
        lines.push(line);
    }
    let rollout_dir = ctx
        .home
        .join("cluster")
        .join("threads")
        .join(format!("{thread_id}-{}", uuid::Uuid::now_v7().simple()));
    let rollout_path = rollout_dir.join(&relative);
    if !rollout_path.starts_with(&rollout_dir) || relative.contains("..") {
        bail!("the thread's rollout path `{relative}` is unsafe");
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let offset = text.len() as u64;
    let write_path = rollout_path.clone();
    tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        if let Some(dir) = write_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&write_path, text)
    })
    .await
    .context("the rollout writer stopped")?
    .with_context(|| format!("cannot write {}", rollout_path.display()))?;
    let delivery = match &git {
        Some(workspace) => {
            let meta = agent_meta(&lines);
            let delivery =
                workspace::for_take_over(&ctx.home, workspace, meta.as_ref(), &thread_id).await?;
            cwd = delivery.checkout.worktree.cwd.clone();
            Some(delivery)
        }
        None => None,
    };
    let mut settings = match ctx.flags.load(&ctx.home, cwd, ctx.approval).await {
        Ok(loaded) => loaded.settings,
        Err(err) => {
            if let Some(delivery) = delivery {
                workspace::discard(delivery).await;
            }
            return Err(err);
        }
    };
    settings.rollout_dir = Some(rollout_dir);
    // A remote sub-agent keeps its place in its tree (its depth still counts).
    let approvals = super::answers::Approvals::of(agent_meta(&lines).as_ref());
    if let Some(agent) = agent_meta(&lines) {
        settings.agents.depth = agent.depth;
        settings.agents.task_path = agent.task_path;
    }
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools()).await?;
    let result = async {
        let mut resumed = runtime
            .resume_thread(settings, rollout_path.clone())
            .await?;
        let ops = thread::subscribe_ops(&ctx, &thread_id).await?;
        resumed.submit(Op::UserInput {
            items: vec![UserInput::Text {
                text: CARRY_ON.into(),
            }],
        })?;
        let pumped = Pumped {
            thread: resumed,
            publisher,
            tail: RolloutTail::starting_at(rollout_path, offset),
            relative,
            ops,
            skip_session_configured: true,
            approvals,
            delivery,
            keys,
        };
        thread::pump(&ctx, pumped).await
    }
    .await;
    runtime.stop();
    drop(permit);
    result
}

/// The sub-agent place recorded in the rollout's `session_meta` (first line), if any.
fn agent_meta(lines: &[String]) -> Option<troupe_messages::agents::AgentMeta> {
    let first = serde_json::from_str::<RolloutLine>(lines.first()?).ok()?;
    match first.record {
        RolloutRecord::SessionMeta(meta) => meta.agent,
        _ => None,
    }
}

/// A `turn_aborted` line for the last turn of `lines` when it has no end: that turn died
/// with the worker, and the carried-on one is a new turn.
fn lost_turn_end(lines: &[String]) -> Result<Option<String>> {
    use troupe_messages::events::{AbortReason, EventMsg};
    let mut open_turn = None;
    for line in lines {
        let Ok(parsed) = serde_json::from_str::<RolloutLine>(line) else {
            continue;
        };
        match parsed.record {
            RolloutRecord::TurnContext(context) => open_turn = Some(context.turn_id),
            RolloutRecord::Event(EventMsg::TurnStarted { turn_id }) => open_turn = Some(turn_id),
            RolloutRecord::Event(EventMsg::TurnComplete { .. } | EventMsg::TurnAborted { .. }) => {
                open_turn = None
            }
            _ => {}
        }
    }
    let Some(turn_id) = open_turn else {
        return Ok(None);
    };
    let line = RolloutLine {
        timestamp: troupe_actors::rollout_recorder::path::now_rfc3339(),
        record: RolloutRecord::Event(EventMsg::TurnAborted {
            turn_id,
            reason: AbortReason::Failed,
        }),
    };
    serde_json::to_string(&line)
        .map(Some)
        .context("cannot serialize the lost turn's end")
}

/// An output line for each tool call of `lines` that has none.
fn lost_call_outputs(lines: &[String]) -> Result<Vec<String>> {
    use troupe_actors::rollout_recorder::replay::dangling_calls;
    use troupe_messages::tools::ToolOutput;
    let mut items = Vec::new();
    for line in lines {
        if let Ok(parsed) = serde_json::from_str::<RolloutLine>(line) {
            if let RolloutRecord::ResponseItem(item) = parsed.record {
                items.push(item);
            }
        }
    }
    dangling_calls(&items)
        .into_iter()
        .map(|(call_id, custom)| {
            let item = troupe_actors::turn::prompt::output_item(&ToolOutput {
                call_id,
                content: WORKER_LOST.into(),
                success: false,
                custom,
                parts: Vec::new(),
            });
            let line = RolloutLine {
                timestamp: troupe_actors::rollout_recorder::path::now_rfc3339(),
                record: RolloutRecord::ResponseItem(item),
            };
            serde_json::to_string(&line).context("cannot serialize an output line")
        })
        .collect()
}
