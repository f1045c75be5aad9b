//! Shared set-up of the runtime benchmarks: settings that point at a mock model, with no
//! sandbox, no approvals and no project docs.
#![allow(dead_code)]

use troupe_messages::settings::SessionSettings;

/// Settings for a thread talking to `base_url`, rooted at `home`: the tests' settings with no
/// project docs and a small output cap, so the figures measure the runtime alone.
pub fn settings(base_url: String, home: &std::path::Path) -> SessionSettings {
    let mut settings = troupe_test_support::settings::session_settings(base_url, home, home);
    settings.base_instructions = String::new();
    settings.tool_output_max_bytes = 1024;
    settings.provider.stream_idle_timeout_ms = 10_000;
    settings.provider.request_timeout_ms = 10_000;
    settings.context.project_doc_max_bytes = 0;
    settings.context.project_root_markers = Vec::new();
    settings
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
