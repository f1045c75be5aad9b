//! Micro-benchmark of the actor hot path: streaming deltas from the turn side through the
//! session to a subscriber. Reports throughput (events/s, with how many a slow subscriber
//! would have lost) and per-event latency percentiles at a paced rate.
//! Run with `cargo bench -p troupe-actors --bench hot_path`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]

#[path = "support.rs"]
mod support;

use std::time::{Duration, Instant};
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::TurnId;
use troupe_messages::mailboxes::SessionMsg;

fn delta(i: usize) -> SessionMsg {
    SessionMsg::TurnEvent {
        turn_id: TurnId(1),
        msg: EventMsg::AgentMessageDelta {
            delta: i.to_string(),
        },
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let home = tempfile::tempdir()?;
        let troupe = Runtime::start(ToolRegistry::with_builtin_tools()).await?;
        let mut thread = troupe.start_thread(support::settings("http://127.0.0.1:9/v1".into(), home.path())).await?;
        let _configured = thread.next_event().await;
        let session = thread.handle.session.clone();

        // Throughput: a burst of deltas, then a marker event that is never dropped.
        const BURST: usize = 1_000_000;
        let started = Instant::now();
        let producer = tokio::spawn({
            let session = session.clone();
            async move {
                for i in 0..BURST {
                    let _ = session.send_message(delta(i));
                }
                let _ = session.send_message(SessionMsg::TurnEvent {
                    turn_id: TurnId(1),
                    msg: EventMsg::Warning { message: "end".into() },
                });
            }
        });
        let mut received = 0usize;
        let mut lag_notices = 0usize;
        while let Some(event) = thread.next_event().await {
            match event.msg {
                EventMsg::AgentMessageDelta { .. } => received += 1,
                EventMsg::Warning { message } if message == "end" => break,
                EventMsg::Warning { .. } => lag_notices += 1,
                _ => {}
            }
        }
        let elapsed = started.elapsed();
        producer.await?;
        println!(
            "burst of {BURST} deltas through the session: {:.0} events/s offered, {received} delivered ({:.0}/s), {} dropped for lag ({lag_notices} lag notices)",
            BURST as f64 / elapsed.as_secs_f64(),
            received as f64 / elapsed.as_secs_f64(),
            BURST - received
        );

        // Latency: one delta at a time, 20,000 round trips from send to receipt.
        let mut latencies = Vec::with_capacity(20_000);
        for i in 0..20_000 {
            let sent = Instant::now();
            let _ = session.send_message(delta(i));
            loop {
                match thread.next_event().await.map(|e| e.msg) {
                    Some(EventMsg::AgentMessageDelta { .. }) => break,
                    Some(_) => continue,
                    None => return Err("thread closed".into()),
                }
            }
            latencies.push(sent.elapsed());
        }
        latencies.sort();
        let pct = |p: f64| latencies[((latencies.len() as f64 - 1.0) * p) as usize];
        println!(
            "one delta at a time, send → subscriber: p50 {:?}, p90 {:?}, p99 {:?}, max {:?}",
            pct(0.5),
            pct(0.9),
            pct(0.99),
            latencies.last().copied().unwrap_or(Duration::ZERO)
        );
        troupe.stop();
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
