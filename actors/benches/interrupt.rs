//! Benchmark: interrupt latency — from `Op::Interrupt` to `TurnAborted`, which the session only
//! reports once the turn's process group has been killed and reaped.
//! Run with `cargo bench -p troupe-actors --bench interrupt`.
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
use troupe_messages::ops::{Op, UserInput};
use troupe_mock_model::{MockModel, MockResponse};

const RUNS: usize = 30;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let script = (0..RUNS)
            .map(|i| MockResponse::shell(&format!("c{i}"), &["sleep", "30"]))
            .collect();
        let mock = MockModel::start(script).await?;
        let home = tempfile::tempdir()?;
        let troupe = Runtime::start(ToolRegistry::with_builtin_tools()).await?;
        let mut thread = troupe
            .start_thread(support::settings(mock.base_url(), home.path()))
            .await?;
        let mut latencies = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            thread.submit(Op::UserInput {
                items: vec![UserInput::Text { text: "go".into() }],
            })?;
            while let Some(event) = thread.next_event().await {
                if matches!(event.msg, EventMsg::ExecCommandBegin { .. }) {
                    break;
                }
            }
            // Let the child really start.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let started = Instant::now();
            thread.submit(Op::Interrupt)?;
            while let Some(event) = thread.next_event().await {
                if matches!(event.msg, EventMsg::TurnAborted { .. }) {
                    break;
                }
            }
            latencies.push(started.elapsed());
        }
        latencies.sort();
        println!(
            "interrupt → turn aborted, child reaped ({RUNS} runs): median {:?}, min {:?}, max {:?}",
            latencies[RUNS / 2],
            latencies[0],
            latencies[RUNS - 1]
        );
        troupe.stop();
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
