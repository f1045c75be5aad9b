//! Benchmark: 100 concurrent turns × 5 tool calls in one runtime — 100 threads, each asked at
//! once to run 5 `shell` calls of `true` (one model request per call, then the answer), as an
//! app-server serving 100 clients would. Runtime level: Troupe has no app-server yet, so this is
//! the in-process runtime, with the mock model in the same process (its memory counts too).
//! Run with `cargo bench -p troupe-actors --bench concurrent_turns [-- THREADS CALLS]`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]

#[path = "support.rs"]
mod support;

use std::time::Instant;

use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, UserInput};
use troupe_mock_model::{AutoConfig, Behaviour, MockModel, MockOptions};

/// Runs one turn to its end: (commands that exited 0, the final answer).
async fn run_turn(mut thread: ThreadClient) -> Result<(usize, Option<String>), String> {
    let text = "Run the commands, then say done.".to_owned();
    thread
        .submit(Op::UserInput {
            items: vec![UserInput::Text { text }],
        })
        .map_err(|e| e.to_string())?;
    let mut commands = 0;
    while let Some(event) = thread.next_event().await {
        match event.msg {
            EventMsg::ExecCommandEnd {
                exit_code: Some(0), ..
            } => commands += 1,
            EventMsg::TurnComplete {
                last_agent_message, ..
            } => return Ok((commands, last_agent_message)),
            EventMsg::TurnAborted { reason, .. } => return Err(format!("aborted: {reason:?}")),
            EventMsg::Error { error, fatal: true } => return Err(format!("error: {error:?}")),
            _ => {}
        }
    }
    Err("thread stopped".into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let numbers = support::number_args();
    let threads = numbers.first().copied().unwrap_or(100);
    let calls = numbers.get(1).copied().unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut options = MockOptions::new(Behaviour::Auto(AutoConfig {
            tool_calls: calls,
            ..AutoConfig::default()
        }));
        options.record = false;
        let mock = MockModel::start_options(options).await?;
        let home = tempfile::tempdir()?;
        let troupe = Runtime::start(ToolRegistry::with_builtin_tools()).await?;
        let mut clients = Vec::with_capacity(threads);
        for _ in 0..threads {
            let mut thread = troupe
                .start_thread(support::settings(mock.base_url(), home.path()))
                .await?;
            let _configured = thread.next_event().await;
            clients.push(thread);
        }
        let before = support::proc_status_kib("VmRSS");
        let started = Instant::now();
        let turns: Vec<_> = clients
            .into_iter()
            .map(|c| tokio::spawn(run_turn(c)))
            .collect();
        let mut finished = Vec::with_capacity(threads);
        for turn in turns {
            finished.push(turn.await?);
        }
        let wall = started.elapsed();
        let peak = support::proc_status_kib("VmHWM");
        let good = finished
            .iter()
            .filter(|r| matches!(r, Ok((n, Some(a))) if *n == calls && a == "done"))
            .count();
        let requests = mock.request_count();
        println!(
            "{threads} concurrent turns × {calls} tool calls (runtime level, no app-server): \
             wall {:.2} s; RSS {:.1} MiB before the turns, peak {:.1} MiB (process, incl. the \
             in-process mock); {good}/{threads} turns ran {calls} calls and answered; {requests} \
             model requests",
            wall.as_secs_f64(),
            before as f64 / 1024.0,
            peak as f64 / 1024.0,
        );
        troupe.stop();
        let expected = (threads * (calls + 1)) as u64;
        if good != threads || requests != expected {
            return Err(format!("expected {threads} good turns and {expected} requests").into());
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
