//! The one `SessionSettings` of the tests and benchmarks: a mock provider, no retries, no
//! sandbox, no approvals. Callers change the few fields their scenario is about.

use std::path::Path;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{
    ContextSettings, ProviderSettings, SessionSettings, ShellEnvPolicy, WireApi,
    DEFAULT_MAX_COMPACTIONS_PER_TURN, DEFAULT_MAX_REQUESTS_PER_TURN, DEFAULT_STREAM_MAX_BYTES,
    DEFAULT_STREAM_MAX_DURATION_MS,
};

/// Settings for a thread that talks to `base_url`, keeps its state under `home` and works in
/// `cwd`. Commands inherit the whole environment (the tests pass what they need to children).
pub fn session_settings(base_url: String, home: &Path, cwd: &Path) -> SessionSettings {
    SessionSettings {
        model: "mock-model".into(),
        provider: ProviderSettings {
            id: "mock".into(),
            name: "Mock".into(),
            base_url,
            wire_api: WireApi::Responses,
            env_key: None,
            http_headers: Default::default(),
            request_max_retries: 0,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 5_000,
            request_timeout_ms: 5_000,
            stream_max_bytes: DEFAULT_STREAM_MAX_BYTES,
            stream_max_duration_ms: DEFAULT_STREAM_MAX_DURATION_MS,
            supports_websockets: false,
            replay: None,
        },
        cwd: cwd.to_path_buf(),
        approval_policy: AskForApproval::Never,
        sandbox_mode: SandboxMode::DangerFullAccess,
        sandbox: Default::default(),
        base_instructions: "test".into(),
        tool_output_max_bytes: 4096,
        default_shell_timeout_ms: 60_000,
        troupe_home: home.to_path_buf(),
        rollout_fsync: Default::default(),
        context: ContextSettings {
            project_doc_max_bytes: 32 * 1024,
            project_doc_fallback_filenames: Vec::new(),
            project_root_markers: vec![".git".into()],
            model_context_window: None,
            auto_compact_token_limit: None,
            reasoning_effort: None,
            shell_env: ShellEnvPolicy {
                inherit: troupe_messages::settings::ShellEnvInherit::All,
                ..ShellEnvPolicy::default()
            },
            collaboration_mode: Default::default(),
            max_compactions_per_turn: DEFAULT_MAX_COMPACTIONS_PER_TURN,
            max_requests_per_turn: DEFAULT_MAX_REQUESTS_PER_TURN,
            developer_instructions: None,
            model_verbosity: None,
            output_schema: None,
        },
        tools: Default::default(),
        agents: Default::default(),
        notify: Vec::new(),
        rollout_dir: None,
        hooks: Default::default(),
        mcp_servers: Default::default(),
        cluster: Default::default(),
        checkpoints: Default::default(),
    }
}
