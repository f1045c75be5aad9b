//! Benchmark: memory of idle threads — 1,000 threads (sessions with their recorder, initial
//! context and rollout file) open in one runtime, as an app-server would hold them.
//! Run with `cargo bench -p troupe-actors --bench idle_threads`.

use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{
    ContextSettings, ProviderSettings, SessionSettings, ShellEnvPolicy, WireApi,
};

const THREADS: usize = 1_000;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn os_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn settings(base_url: String, home: &std::path::Path) -> SessionSettings {
    SessionSettings {
        model: "m".into(),
        provider: ProviderSettings {
            id: "mock".into(),
            name: "mock".into(),
            base_url,
            wire_api: WireApi::Responses,
            env_key: None,
            http_headers: Default::default(),
            request_max_retries: 0,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 10_000,
            request_timeout_ms: 10_000,
        },
        cwd: home.to_path_buf(),
        approval_policy: AskForApproval::Never,
        sandbox_mode: SandboxMode::DangerFullAccess,
        sandbox: Default::default(),
        base_instructions: String::new(),
        tool_output_max_bytes: 1024,
        default_shell_timeout_ms: 60_000,
        troupe_home: home.to_path_buf(),
        rollout_fsync: Default::default(),
        tools: Default::default(),
        context: ContextSettings {
            project_doc_max_bytes: 0,
            project_doc_fallback_filenames: Vec::new(),
            project_root_markers: Vec::new(),
            model_context_window: None,
            auto_compact_token_limit: None,
            reasoning_effort: None,
            shell_env: ShellEnvPolicy {
                inherit: "all".into(),
                ..ShellEnvPolicy::default()
            },
            collaboration_mode: Default::default(),
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
        let before = rss_kib();
        let mut threads = Vec::with_capacity(THREADS);
        for _ in 0..THREADS {
            let mut thread = troupe
                .start_thread(settings("http://127.0.0.1:9/v1".into(), home.path()))
                .await?;
            let _configured = thread.next_event().await;
            threads.push(thread);
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let after = rss_kib();
        println!(
            "{THREADS} idle threads: RSS {:.1} MiB → {:.1} MiB ({:.1} KiB per thread), {} OS threads",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after.saturating_sub(before)) as f64 / THREADS as f64,
            os_threads()
        );
        troupe.stop();
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
