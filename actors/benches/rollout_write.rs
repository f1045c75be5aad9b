//! Benchmark: rollout write throughput through a session, as a busy thread records items.
//! - acknowledged one at a time under `every_item` (each item written and fsynced before the
//!   next is sent: the fsync-bound path of tool results);
//! - a burst under `turn_boundaries` (written as they come), then `Shutdown`, whose
//!   `ShutdownComplete` comes after the final fsync;
//! - several sessions at once under `every_item` (do their fsyncs wait on each other?).
//!
//! Run with `cargo bench -p troupe-actors --bench rollout_write`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]

#[path = "support.rs"]
mod support;

use std::time::{Duration, Instant};
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::TurnId;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::ops::Op;
use troupe_messages::settings::FsyncPolicy;

type BenchResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A 200-byte user message, about the size of a short tool result.
fn item(i: usize) -> SessionMsg {
    SessionMsg::TurnItem {
        turn_id: TurnId(1),
        item: ResponseItem::user_text(format!("{i:0>200}")),
    }
}

async fn open(
    runtime: &Runtime,
    home: &std::path::Path,
    policy: FsyncPolicy,
) -> BenchResult<ThreadClient> {
    let mut settings = support::settings("http://127.0.0.1:9/v1".into(), home);
    settings.rollout_fsync = policy;
    let mut thread = runtime.start_thread(settings).await?;
    let _configured = thread.next_event().await;
    Ok(thread)
}

/// Sends `count` items one at a time, each after the previous one was acknowledged.
async fn one_at_a_time(mut thread: ThreadClient, count: usize) -> BenchResult<()> {
    let session = thread.handle.session.clone();
    for i in 0..count {
        session.send_message(item(i))?;
        loop {
            match thread.next_event().await.map(|e| e.msg) {
                Some(EventMsg::ItemRecorded { .. }) => break,
                Some(_) => continue,
                None => return Err("thread closed".into()),
            }
        }
    }
    Ok(())
}

fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

fn main() -> BenchResult<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let home = tempfile::tempdir()?;
        let troupe = Runtime::start(ToolRegistry::with_builtin_tools()).await?;

        const SYNCED: usize = 2_000;
        let thread = open(&troupe, home.path(), FsyncPolicy::EveryItem).await?;
        let started = Instant::now();
        one_at_a_time(thread, SYNCED).await?;
        let elapsed = started.elapsed();
        println!(
            "every_item, one at a time: {SYNCED} items in {elapsed:.2?} ({:.0} items/s, {:.0} µs each)",
            rate(SYNCED, elapsed),
            elapsed.as_micros() as f64 / SYNCED as f64
        );

        const BURST: usize = 100_000;
        let mut thread = open(&troupe, home.path(), FsyncPolicy::TurnBoundaries).await?;
        let session = thread.handle.session.clone();
        let started = Instant::now();
        for i in 0..BURST {
            session.send_message(item(i))?;
        }
        thread.submit(Op::Shutdown)?;
        let mut recorded = 0usize;
        while let Some(event) = thread.next_event().await {
            match event.msg {
                EventMsg::ItemRecorded { .. } => recorded += 1,
                EventMsg::ShutdownComplete => break,
                _ => {}
            }
        }
        let elapsed = started.elapsed();
        let bytes = std::fs::metadata(&thread.handle.rollout_path)?.len();
        println!(
            "turn_boundaries, burst: {recorded} items ({:.1} MiB) written and fsynced in {elapsed:.2?} ({:.0} items/s)",
            bytes as f64 / (1024.0 * 1024.0),
            rate(recorded, elapsed)
        );

        const SESSIONS: usize = 16;
        const EACH: usize = 250;
        let mut threads = Vec::with_capacity(SESSIONS);
        for _ in 0..SESSIONS {
            threads.push(open(&troupe, home.path(), FsyncPolicy::EveryItem).await?);
        }
        let started = Instant::now();
        let tasks: Vec<_> = threads
            .into_iter()
            .map(|thread| tokio::spawn(one_at_a_time(thread, EACH)))
            .collect();
        for task in tasks {
            task.await??;
        }
        let elapsed = started.elapsed();
        println!(
            "every_item, {SESSIONS} sessions at once: {} items in {elapsed:.2?} ({:.0} items/s in all)",
            SESSIONS * EACH,
            rate(SESSIONS * EACH, elapsed)
        );
        troupe.stop();
        Ok(())
    })
}
