//! Shared set-up of the runtime benchmarks: settings that point at a mock model, with no
//! sandbox, no approvals and no project docs.
#![allow(dead_code)]

use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{
    ContextSettings, ProviderSettings, SessionSettings, ShellEnvPolicy, WireApi,
};

/// Settings for a thread talking to `base_url`, rooted at `home`.
pub fn settings(base_url: String, home: &std::path::Path) -> SessionSettings {
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
            stream_max_bytes: troupe_messages::settings::DEFAULT_STREAM_MAX_BYTES,
            stream_max_duration_ms: troupe_messages::settings::DEFAULT_STREAM_MAX_DURATION_MS,
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
        agents: Default::default(),
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
            max_compactions_per_turn: troupe_messages::settings::DEFAULT_MAX_COMPACTIONS_PER_TURN,
            max_requests_per_turn: troupe_messages::settings::DEFAULT_MAX_REQUESTS_PER_TURN,
        },
    }
}

/// A `/proc/self/status` figure in KiB, e.g. `VmRSS` (resident now) or `VmHWM` (peak).
pub fn proc_status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The numeric command-line arguments, in order (`cargo bench` adds `--bench`, which is skipped).
pub fn number_args() -> Vec<usize> {
    std::env::args().filter_map(|a| a.parse().ok()).collect()
}
