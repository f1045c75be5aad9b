//! `troupe worker`: joins a pool of the scale-out cluster. It takes spawn requests from the
//! pool's work queue while it has a free slot, runs each thread in its own local `Runtime`
//! (the same actors and sandbox as `exec`, under this machine's config and requirements),
//! publishes every event and rollout line to the thread's subject under a lease, and
//! publishes its heartbeat and free slots.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

mod answers;
mod failover;
mod rollout_tail;
mod roots;
mod thread;
mod workspace;

use anyhow::{bail, Context, Result};
use async_nats::jetstream::consumer::pull;
use clap::Args;
use futures::StreamExt;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use troupe_cli::session_flags::SessionFlags;
use troupe_cluster::layout::worker_key;
use troupe_cluster::wire::{SpawnRequest, WorkerStatus};
use troupe_cluster::{Cluster, ClusterOptions};
use troupe_messages::policy::AskForApproval;

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The pool's NATS server (`nats://host:port`); default `[cluster] nats_url`.
    #[arg(long = "nats", value_name = "URL")]
    nats: Option<String>,
    /// Threads this worker runs at once.
    #[arg(long = "slots", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    slots: u32,
    /// A label published with the heartbeat (`k=v`, repeatable).
    #[arg(long = "label", value_name = "K=V", value_parser = parse_label)]
    labels: Vec<(String, String)>,
    /// Config overrides and profile of this worker (`-c`, `-p`, …), as for `exec`.
    #[command(flatten)]
    flags: SessionFlags,
}

fn parse_label(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("`{text}` is not k=v")),
    }
}

/// Pause after a failed fetch (the server restarting) before the next.
const FETCH_RETRY: Duration = Duration::from_millis(250);

pub async fn run(args: WorkerArgs) -> Result<ExitCode> {
    let home = troupe_config::home::troupe_home()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (cluster_config, _) = args.flags.load_cluster(&home, cwd)?;
    let options = ClusterOptions::from_config(&cluster_config, args.nats.as_deref())?;
    let lease_timeout = options.lease_timeout;
    let worker_id = uuid::Uuid::now_v7().simple().to_string();
    let roots = roots::resolve(&options.worker_roots)?;
    let cluster = Cluster::connect(options, &format!("troupe-worker-{worker_id}")).await?;
    if let Some(warning) = cluster.anonymous_warning() {
        troupe_cli::output::warn(warning);
    }
    let secrets = troupe_cluster::secrets::bucket(&cluster).await?;
    let layout = cluster.layout().clone();
    let consumer = workers_consumer(&cluster).await?;
    let slots = Arc::new(Semaphore::new(args.slots as usize));
    let labels: BTreeMap<String, String> = args.labels.into_iter().collect();
    eprintln!(
        "worker {worker_id}: pool `{}` at {}, {} slot(s)",
        layout.pool(),
        troupe_cluster::connect::redact_url(&cluster.options.url),
        args.slots
    );
    tokio::spawn(heartbeat(
        cluster.clone(),
        worker_id.clone(),
        args.slots,
        labels,
        slots.clone(),
        lease_timeout,
    ));
    let job = Arc::new(thread::WorkerContext {
        cluster: cluster.clone(),
        worker_id: worker_id.clone(),
        home,
        flags: SessionFlags {
            config: args.flags.config.clone(),
            profile: args.flags.profile.clone(),
            strict_config: args.flags.strict_config,
            ignore_user_config: args.flags.ignore_user_config,
            // The requester checked its directory; the worker works in it as asked.
            skip_git_repo_check: true,
            ..SessionFlags::default()
        },
        approval: AskForApproval::Never,
        secrets,
        roots,
    });
    tokio::spawn(failover::monitor(job.clone(), slots.clone()));
    let mut stop = Box::pin(stop_signal());
    loop {
        // Fetch only with a slot free, but hold none while fetching: the take-over monitor
        // needs a free slot too.
        tokio::select! {
            permit = slots.clone().acquire_owned() => drop(permit.context("the slot pool closed")?),
            () = &mut stop => break,
        }
        let fetched = tokio::select! {
            fetched = fetch_one(&consumer) => fetched,
            () = &mut stop => break,
        };
        let message = match fetched {
            Ok(Some(message)) => message,
            Ok(None) => continue,
            Err(err) => {
                tracing::debug!(%err, "fetch failed; retrying");
                tokio::time::sleep(FETCH_RETRY).await;
                continue;
            }
        };
        // The slot may have gone to a take-over meanwhile: the request waits for the next
        // (unacknowledged, so it goes to another worker if this one dies).
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => permit.context("the slot pool closed")?,
            () = &mut stop => break,
        };
        // Taken: no other worker gets it, whatever happens to this one from here on.
        if let Err(err) = message.double_ack().await {
            tracing::warn!(%err, "cannot acknowledge a spawn request; leaving it");
            continue;
        }
        let request: SpawnRequest = match serde_json::from_slice(&message.payload) {
            Ok(request) => request,
            Err(err) => {
                eprintln!("worker {worker_id}: dropped a malformed spawn request: {err}");
                continue;
            }
        };
        if request.deadline_ms < troupe_cluster::now_ms() {
            eprintln!(
                "worker {worker_id}: spawn request {} came after its deadline; not started",
                request.request_id
            );
            continue;
        }
        let job = job.clone();
        tokio::spawn(async move {
            let request_id = request.request_id.clone();
            if let Err(err) = thread::run(job, request).await {
                eprintln!("thread of spawn request {request_id}: {err:#}");
            }
            drop(permit);
        });
    }
    // Gone from the pool's list of workers; its running threads' leases lapse, and other
    // workers take them over.
    let _ = cluster.kv.purge(worker_key(&worker_id)).await;
    eprintln!("worker {worker_id}: stopping");
    Ok(ExitCode::SUCCESS)
}

/// The durable consumer every worker of the pool pulls spawn requests from.
async fn workers_consumer(
    cluster: &Cluster,
) -> Result<async_nats::jetstream::consumer::Consumer<pull::Config>> {
    let layout = cluster.layout();
    let stream = cluster
        .js
        .get_stream(layout.spawn_stream())
        .await
        .with_context(|| format!("stream {}", layout.spawn_stream()))?;
    let consumer = stream
        .get_or_create_consumer(
            layout.workers_consumer(),
            pull::Config {
                durable_name: Some(layout.workers_consumer().to_string()),
                ack_policy: async_nats::jetstream::consumer::AckPolicy::Explicit,
                ..pull::Config::default()
            },
        )
        .await
        .context("the workers' consumer of spawn requests")?;
    Ok(consumer)
}

/// One spawn request, or none within a second.
async fn fetch_one(
    consumer: &async_nats::jetstream::consumer::Consumer<pull::Config>,
) -> Result<Option<async_nats::jetstream::Message>> {
    let mut batch = consumer
        .fetch()
        .max_messages(1)
        .expires(Duration::from_secs(1))
        .messages()
        .await
        .map_err(|err| anyhow::anyhow!("fetch: {err}"))?;
    match batch.next().await {
        Some(Ok(message)) => Ok(Some(message)),
        Some(Err(err)) => bail!("fetch: {err}"),
        None => Ok(None),
    }
}

/// `worker.<id>`: alive, and how many slots are free, every third of the lease timeout.
async fn heartbeat(
    cluster: Cluster,
    worker: String,
    slots: u32,
    labels: BTreeMap<String, String>,
    free: Arc<Semaphore>,
    lease_timeout: Duration,
) {
    let mut tick = tokio::time::interval(lease_timeout / 3);
    loop {
        tick.tick().await;
        let status = WorkerStatus {
            worker: worker.clone(),
            slots,
            free: u32::try_from(free.available_permits()).unwrap_or(slots),
            labels: labels.clone(),
            at_ms: troupe_cluster::now_ms(),
        };
        let Ok(value) = serde_json::to_vec(&status) else {
            continue;
        };
        if let Err(err) = cluster.kv.put(worker_key(&worker), value.into()).await {
            tracing::debug!(%err, "heartbeat not written");
        }
    }
}

/// SIGINT or SIGTERM: stop taking requests.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
