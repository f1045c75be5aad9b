//! Benchmark: memory of idle threads — 1,000 threads (sessions with their recorder, initial
//! context and rollout file) open in one runtime, as an app-server would hold them.
//! Run with `cargo bench -p troupe-actors --bench idle_threads [-- THREADS]`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]

#[path = "support.rs"]
mod support;

use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;

fn os_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(std::iter::Iterator::count)
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count = support::number_args().first().copied().unwrap_or(1_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let home = tempfile::tempdir()?;
        let troupe = Runtime::start(ToolRegistry::with_builtin_tools()).await?;
        let before = support::proc_status_kib("VmRSS");
        let mut threads = Vec::with_capacity(count);
        for _ in 0..count {
            let mut thread = troupe
                .start_thread(support::settings(
                    "http://127.0.0.1:9/v1".into(),
                    home.path(),
                ))
                .await?;
            let _configured = thread.next_event().await;
            threads.push(thread);
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let after = support::proc_status_kib("VmRSS");
        println!(
            "{count} idle threads: RSS {:.1} MiB → {:.1} MiB ({:.1} KiB per thread), {} OS threads",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after.saturating_sub(before)) as f64 / count as f64,
            os_threads()
        );
        troupe.stop();
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
