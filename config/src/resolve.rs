//! From layers and overrides to the settings a thread runs under.
//!
//! Precedence, lowest first: defaults < system config < user config < selected profile <
//! trusted project `.troupe/config.toml` layers (root → cwd, nearest wins; each only as
//! pinned in the trust store, without provider or environment keys) < `-c` overrides and
//! flags. `requirements.toml` then constrains the result.

use crate::error::ConfigError;
use crate::file::{ConfigToml, ProviderToml, SandboxWorkspaceWriteToml};
use crate::hooks::{read_hooks_json, HooksToml};
use crate::layers::{merge, project_root, read_layer};
use crate::limits;
use crate::overrides::{apply_override, parse_override};
use crate::project::load_project;
use crate::requirements::Requirements;
use crate::trust::TrustStore;
use std::path::{Path, PathBuf};
use toml::{Table, Value};
use troupe_messages::hooks::{HookHandler, HookSettings, DEFAULT_MAX_STOP_CONTINUATIONS};
use troupe_messages::mcp::MCP_CREDENTIALS_FILE;
use troupe_messages::policy::{
    AskForApproval, NetworkProxySettings, SandboxBackendKind, SandboxMode, SandboxSettings,
    DEFAULT_PROXY_PORT,
};
use troupe_messages::settings::{
    ContextSettings, ProviderSettings, SessionSettings, ShellEnvPolicy, ToolSettings, WireApi,
    DEFAULT_MAX_COMPACTIONS_PER_TURN, DEFAULT_MAX_REQUESTS_PER_TURN, DEFAULT_STREAM_MAX_BYTES,
    DEFAULT_STREAM_MAX_DURATION_MS,
};

/// The model used when config names none.
pub const DEFAULT_MODEL: &str = "gpt-5.1-codex";
/// Built-in instructions sent with every request unless `instructions` replaces them.
pub const BASE_INSTRUCTIONS: &str = include_str!("base_instructions.md");
/// Default shared budget of the AGENTS.md chain.
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: usize = 32 * 1024;
/// Default tool output kept for the model, in tokens.
pub const DEFAULT_TOOL_OUTPUT_TOKENS: usize = 10_000;
/// Follow-up turns an active goal may start in a row when config sets none.
pub const DEFAULT_MAX_GOAL_TURNS: u32 = 10;

/// What the command line adds on top of the files.
#[derive(Debug, Clone, Default)]
pub struct CliOverrides {
    /// Raw `-c key=value` strings, in order.
    pub raw: Vec<String>,
    pub model: Option<String>,
    pub sandbox_mode: Option<SandboxMode>,
    pub approval_policy: Option<AskForApproval>,
    pub cwd: Option<PathBuf>,
    pub profile: Option<String>,
    /// `--strict-config`: an unknown key (or feature) in any file or override is an error.
    pub strict_config: bool,
    /// `--ignore-user-config`: skip `$TROUPE_HOME/config.toml` (auth still lives there).
    pub ignore_user_config: bool,
}

/// Resolved settings plus what the user should be told about their config.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub settings: SessionSettings,
    /// Unknown keys and similar non-fatal findings, one line each, naming the file.
    pub warnings: Vec<String>,
    /// Config files that contributed, lowest precedence first.
    pub layers: Vec<PathBuf>,
    /// `[history]`: whether and how much of the prompt history is kept.
    pub history: crate::file::HistoryToml,
    /// `[cluster]`: the worker pool's NATS server, for `worker` and `exec --remote`.
    pub cluster: crate::cluster::ClusterToml,
    /// Whether the session's directory is trusted (`trust.toml` or a `[projects]` entry).
    pub trusted: bool,
    /// `workspace-write` when the directory is trusted, neither the command line nor a config
    /// file chose a sandbox mode, and the requirements allow it: the mode an interactive
    /// session starts in there. `None` otherwise.
    pub trusted_sandbox_default: Option<SandboxMode>,
}

/// The warning for a key this build does not know; `--strict-config` turns these into errors.
pub fn unknown_key_warning(source: &str, key: &str) -> String {
    format!("{source}: unknown key `{key}` (ignored)")
}

fn is_unknown_key_warning(warning: &str) -> bool {
    warning.contains(": unknown key `") || warning.contains(": unknown feature `")
}

/// Where system-wide config and requirements live (`TROUPE_SYSTEM_DIR`, default `/etc/troupe`).
pub fn system_dir() -> PathBuf {
    std::env::var_os("TROUPE_SYSTEM_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/troupe"))
}

/// Loads every layer and resolves settings; see the module doc for precedence.
pub fn load_settings(home: &Path, cli: &CliOverrides) -> Result<SessionSettings, ConfigError> {
    load_config(home, cli).map(|loaded| loaded.settings)
}

/// Merges `[profiles.NAME]` over `merged`. A profile with no table is fine when its own
/// file (`NAME.config.toml`) was layered; otherwise it is an error naming the known ones.
fn apply_profile(
    merged: &mut Table,
    name: String,
    profile_file: Option<&Path>,
) -> Result<(), ConfigError> {
    let profiles = merged.get("profiles").and_then(Value::as_table);
    let profile_table = profiles
        .and_then(|profiles| profiles.get(&name))
        .and_then(Value::as_table)
        .cloned();
    match profile_table {
        Some(table) => merge(merged, &table),
        None if profile_file.is_some_and(Path::exists) => {}
        None => {
            let known = profiles
                .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            return Err(ConfigError::UnknownProfile {
                name,
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known
                },
            });
        }
    }
    Ok(())
}

/// Like [`load_settings`], keeping warnings and the list of layers.
pub fn load_config(home: &Path, cli: &CliOverrides) -> Result<LoadedConfig, ConfigError> {
    load_config_in(home, &system_dir(), cli)
}

/// [`load_config`] with an explicit system directory.
pub fn load_config_in(
    home: &Path,
    system: &Path,
    cli: &CliOverrides,
) -> Result<LoadedConfig, ConfigError> {
    let mut warnings = Vec::new();
    let mut layers = Vec::new();
    let mut merged = Table::new();
    let mut hooks = Vec::new();
    let mut base_paths = vec![system.join("config.toml")];
    if !cli.ignore_user_config {
        base_paths.push(home.join("config.toml"));
    }
    let profile_file = cli
        .profile
        .as_deref()
        .map(|name| profile_file(home, name))
        .transpose()?;
    // `-p NAME` also layers `$TROUPE_HOME/NAME.config.toml` (Codex 0.169's form) when present.
    base_paths.extend(profile_file.clone().filter(|path| path.exists()));
    for path in base_paths {
        if let Some(mut layer) = read_layer(&path, &mut warnings)? {
            hooks.extend(take_hooks(&mut layer.table, &layer.path)?);
            merge(&mut merged, &layer.table);
            layers.push(layer.path);
        }
    }
    // A `hooks.json` beside the system and the user config adds its hooks too.
    let mut hook_dirs = vec![system];
    if !cli.ignore_user_config {
        hook_dirs.push(home);
    }
    for dir in hook_dirs {
        hooks.extend(read_hooks_json(dir)?);
    }
    let base_layers = layers.len();

    let mut cli_table = Table::new();
    for raw in &cli.raw {
        apply_override(&mut cli_table, &parse_override(raw)?)?;
    }
    warn_unknown_overrides(&cli_table, &mut warnings);

    let profile = cli
        .profile
        .clone()
        .or_else(|| string_at(&cli_table, "profile"))
        .or_else(|| string_at(&merged, "profile"));
    let profile_name = profile.clone();
    if let Some(name) = profile {
        apply_profile(&mut merged, name, profile_file.as_deref())?;
    }

    let cwd = match &cli.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|source| ConfigError::Read {
            path: PathBuf::from("."),
            source,
        })?,
    };
    // Project files only in a trusted directory, and each only as pinned (`trust.rs`).
    let store = TrustStore::load(home)?;
    let canonical_cwd = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    let mut pinned_rules = Default::default();
    let trusted = is_trusted(&merged, &canonical_cwd) || store.trusts_dir(&canonical_cwd);
    if trusted {
        let markers = string_list_at(&merged, "project_root_markers")
            .unwrap_or_else(|| vec![".git".to_string()]);
        let root = project_root(&canonical_cwd, &markers);
        let project = load_project(&store, &root, &canonical_cwd, &mut warnings)?;
        for mut layer in project.layers {
            hooks.extend(take_hooks(&mut layer.table, &layer.path)?);
            merge(&mut merged, &layer.table);
            layers.push(layer.path);
        }
        pinned_rules = project.pinned_rules;
    }
    hooks.extend(take_hooks(&mut cli_table, Path::new("-c override"))?);
    merge(&mut merged, &cli_table);

    let config: ConfigToml =
        serde_path_to_error::deserialize(merged).map_err(|err| ConfigError::InvalidKey {
            key: err.path().to_string(),
            message: err.inner().to_string(),
        })?;
    let requirements = Requirements::load(&system.join("requirements.toml"))?;
    let features = config.features.clone();
    let history = config.history.clone().unwrap_or_default();
    let cluster = config.cluster.clone().unwrap_or_default();
    let sandbox_chosen = cli.sandbox_mode.is_some() || config.sandbox_mode.is_some();
    let workspace_write_allowed = requirements
        .allowed_sandbox_modes
        .as_ref()
        .is_none_or(|modes| modes.contains(&SandboxMode::WorkspaceWrite));
    let trusted_sandbox_default = (trusted && !sandbox_chosen && workspace_write_allowed)
        .then_some(SandboxMode::WorkspaceWrite);
    let mut settings = resolve(config, home, cli, cwd, &requirements)?;
    for (name, enabled) in &features {
        match crate::features::find(name) {
            Some(feature) => feature.apply(&mut settings, *enabled),
            None => warnings.push(format!(
                "[features]: unknown feature `{name}` (ignored; known: {})",
                crate::features::known_names()
            )),
        }
    }
    if cli.strict_config {
        let unknown: Vec<&String> = warnings
            .iter()
            .filter(|w| is_unknown_key_warning(w))
            .collect();
        if !unknown.is_empty() {
            return Err(ConfigError::Strict {
                unknown: unknown
                    .iter()
                    .map(|w| w.replace(" (ignored)", "").replace("(ignored; ", "("))
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
    }
    limits::check(&settings).map_err(|violation| {
        let sources = limits::Sources {
            cli: &cli_table,
            cli_raw: &cli.raw,
            base_files: &layers[..base_layers],
            project_files: &layers[base_layers..],
            profile: profile_name.as_deref(),
        };
        limits::locate(violation, &sources)
    })?;
    settings.hooks.handlers = hooks;
    settings.sandbox.pinned_rules = pinned_rules;
    settings.sandbox.protected_paths = vec![home.to_path_buf()];
    settings.sandbox.stored_keys = crate::home::stored_key_paths(home);
    Ok(LoadedConfig {
        settings,
        warnings,
        layers,
        history,
        cluster,
        trusted,
        trusted_sandbox_default,
    })
}

/// `$TROUPE_HOME/NAME.config.toml`, for a profile name that is a plain file name.
fn profile_file(home: &Path, name: &str) -> Result<PathBuf, ConfigError> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if !plain {
        return Err(ConfigError::InvalidKey {
            key: "profile".into(),
            message: format!(
                "`{name}` is not a profile name (letters, digits, `-`, `_`, `.`; not starting with `.`)"
            ),
        });
    }
    Ok(home.join(format!("{name}.config.toml")))
}

/// Removes `[hooks]` from a layer (hooks add up across layers; they are not merged) and
/// returns its handlers. The file was type-checked already, with lines, by `check_text`.
fn take_hooks(table: &mut Table, source: &Path) -> Result<Vec<HookHandler>, ConfigError> {
    let Some(value) = table.remove("hooks") else {
        return Ok(Vec::new());
    };
    let parsed: HooksToml =
        serde_path_to_error::deserialize(value).map_err(|err| ConfigError::InvalidKey {
            key: format!("{}: hooks.{}", source.display(), err.path()),
            message: err.inner().to_string(),
        })?;
    parsed.into_handlers(source)
}

fn warn_unknown_overrides(cli_table: &Table, warnings: &mut Vec<String>) {
    let mut unknown = Vec::new();
    let _ = serde_ignored::deserialize::<_, _, ConfigToml>(
        cli_table.clone(),
        |key: serde_ignored::Path<'_>| unknown.push(key.to_string()),
    );
    for key in unknown {
        warnings.push(unknown_key_warning("-c override", &key));
    }
}

fn string_at(table: &Table, key: &str) -> Option<String> {
    table.get(key).and_then(Value::as_str).map(str::to_string)
}

fn string_list_at(table: &Table, key: &str) -> Option<Vec<String>> {
    table.get(key).and_then(Value::as_array).map(|items| {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

/// Whether `cwd` or an ancestor is marked `trust_level = "trusted"` under `[projects]`.
fn is_trusted(merged: &Table, cwd: &Path) -> bool {
    let Some(projects) = merged.get("projects").and_then(Value::as_table) else {
        return false;
    };
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    projects.iter().any(|(path, entry)| {
        let trusted = entry.get("trust_level").and_then(Value::as_str) == Some("trusted");
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
        trusted && cwd.starts_with(path)
    })
}

fn resolve(
    config: ConfigToml,
    home: &Path,
    cli: &CliOverrides,
    cwd: PathBuf,
    requirements: &Requirements,
) -> Result<SessionSettings, ConfigError> {
    let provider_id = config
        .model_provider
        .clone()
        .unwrap_or_else(|| "openai".to_string());
    let provider = resolve_provider(&provider_id, &config)?;
    let approval_explicit = cli.approval_policy.is_some() || config.approval_policy.is_some();
    let approval_policy = requirements.constrain(
        "approval_policy",
        cli.approval_policy
            .or(config.approval_policy)
            .unwrap_or_default(),
        approval_explicit,
        &requirements.allowed_approval_policies,
    )?;
    let sandbox_explicit = cli.sandbox_mode.is_some() || config.sandbox_mode.is_some();
    let sandbox_mode = requirements.constrain(
        "sandbox_mode",
        cli.sandbox_mode.or(config.sandbox_mode).unwrap_or_default(),
        sandbox_explicit,
        &requirements.allowed_sandbox_modes,
    )?;
    let env = config.shell_environment_policy.unwrap_or_default();
    Ok(SessionSettings {
        model: cli
            .model
            .clone()
            .or(config.model)
            .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
        provider,
        cwd,
        approval_policy,
        sandbox_mode,
        sandbox: sandbox_settings(
            config.sandbox_workspace_write.clone().unwrap_or_default(),
            config.sandbox_deny_read.clone(),
            config.sandbox_backend,
            grants_forbidden(requirements),
            config.network_proxy.clone().unwrap_or_default(),
        ),
        base_instructions: config
            .instructions
            .unwrap_or_else(|| BASE_INSTRUCTIONS.to_string()),
        tool_output_max_bytes: config
            .tool_output_token_limit
            .unwrap_or(DEFAULT_TOOL_OUTPUT_TOKENS)
            .saturating_mul(4)
            .max(256),
        default_shell_timeout_ms: config.shell_timeout_ms.unwrap_or(10 * 60 * 1000),
        troupe_home: home.to_path_buf(),
        rollout_fsync: config.rollout_fsync.unwrap_or_default(),
        context: ContextSettings {
            project_doc_max_bytes: config
                .project_doc_max_bytes
                .unwrap_or(DEFAULT_PROJECT_DOC_MAX_BYTES),
            project_doc_fallback_filenames: config
                .project_doc_fallback_filenames
                .unwrap_or_default(),
            project_root_markers: config
                .project_root_markers
                .unwrap_or_else(|| vec![".git".to_string()]),
            model_context_window: config.model_context_window,
            auto_compact_token_limit: config.model_auto_compact_token_limit,
            reasoning_effort: config
                .model_reasoning_effort
                .map(|e| format!("{e:?}").to_lowercase()),
            shell_env: ShellEnvPolicy {
                inherit: env.inherit.map(Into::into).unwrap_or_default(),
                ignore_default_excludes: env.ignore_default_excludes,
                exclude: env.exclude,
                set: env.set,
                include_only: env.include_only,
            },
            collaboration_mode: config.collaboration_mode.unwrap_or_default(),
            max_compactions_per_turn: config
                .max_compactions_per_turn
                .unwrap_or(DEFAULT_MAX_COMPACTIONS_PER_TURN),
            max_requests_per_turn: config
                .max_requests_per_turn
                .unwrap_or(DEFAULT_MAX_REQUESTS_PER_TURN),
            developer_instructions: config
                .developer_instructions
                .filter(|t| !t.trim().is_empty()),
            model_verbosity: config.model_verbosity.map(|v| v.as_str().to_string()),
            output_schema: None,
        },
        tools: ToolSettings {
            apply_patch: config.apply_patch_tool_type.unwrap_or_default(),
            shell: config.shell_tool_type.unwrap_or_default(),
            request_permissions: false,
            web_search: config.web_search.unwrap_or_default(),
            max_goal_turns: config.max_goal_turns.unwrap_or(DEFAULT_MAX_GOAL_TURNS),
        },
        agents: agent_settings(config.agents.unwrap_or_default()),
        notify: notify_argv(config.notify)?,
        rollout_dir: None,
        hooks: HookSettings {
            handlers: Vec::new(),
            max_stop_continuations: config
                .max_stop_continuations
                .unwrap_or(DEFAULT_MAX_STOP_CONTINUATIONS),
        },
        mcp_servers: crate::mcp::resolve(config.mcp_servers, &home.join(MCP_CREDENTIALS_FILE)),
        cluster: config.cluster.unwrap_or_default(),
        checkpoints: checkpoint_settings(config.checkpoints.unwrap_or_default()),
    })
}

/// `[checkpoints]` over the defaults.
fn checkpoint_settings(
    toml: crate::file::CheckpointsToml,
) -> troupe_messages::settings::CheckpointSettings {
    let defaults = troupe_messages::settings::CheckpointSettings::default();
    troupe_messages::settings::CheckpointSettings {
        enabled: toml.enabled.unwrap_or(defaults.enabled),
        max_age_days: toml.max_age_days.unwrap_or(defaults.max_age_days),
        max_total_mb: toml.max_total_mb.unwrap_or(defaults.max_total_mb),
        max_dir_mb: toml.max_dir_mb.unwrap_or(defaults.max_dir_mb),
    }
}

/// `notify = ["prog", "arg", …]`: an empty program is an error (nothing would run).
fn notify_argv(notify: Option<Vec<String>>) -> Result<Vec<String>, ConfigError> {
    let argv = notify.unwrap_or_default();
    if argv
        .first()
        .is_some_and(|program| program.trim().is_empty())
    {
        return Err(ConfigError::InvalidKey {
            key: "notify".into(),
            message: "the first element must name the program to run".into(),
        });
    }
    Ok(argv)
}

/// `[agents]` over the defaults; configured roles replace built-ins of the same name.
fn agent_settings(toml: crate::file::AgentsToml) -> troupe_messages::agents::AgentSettings {
    use troupe_messages::agents::{AgentRole, AgentSettings};
    let mut settings = AgentSettings::default();
    settings.enabled = toml.enabled.unwrap_or(settings.enabled);
    settings.max_depth = toml.max_depth.unwrap_or(settings.max_depth);
    settings.max_threads = toml.max_threads.unwrap_or(settings.max_threads);
    settings.max_concurrent_commands = toml.max_concurrent_commands.map(|n| n.max(1));
    settings.token_budget = toml.token_budget;
    for (name, role) in toml.roles {
        settings.roles.insert(
            name,
            AgentRole {
                description: role.description.unwrap_or_default(),
                model: role.model,
                reasoning_effort: role
                    .reasoning_effort
                    .map(|e| format!("{e:?}").to_lowercase()),
                sandbox_mode: role.sandbox_mode,
                developer_instructions: role.developer_instructions,
            },
        );
    }
    settings
}

/// The built-in providers; user entries with the same id replace their fields.
fn builtin_provider(id: &str) -> Option<ProviderToml> {
    match id {
        "openai" => Some(ProviderToml {
            name: Some("OpenAI".into()),
            base_url: Some(
                std::env::var("OPENAI_BASE_URL")
                    .unwrap_or_else(|_| "https://api.openai.com/v1".into()),
            ),
            wire_api: Some(WireApi::Responses),
            env_key: Some("OPENAI_API_KEY".into()),
            ..ProviderToml::default()
        }),
        _ => {
            let (name, _) = LOCAL_PROVIDERS.iter().find(|(local, _)| *local == id)?;
            Some(ProviderToml {
                name: Some(format!("local server ({name})")),
                base_url: Some(local_base_url(id)?),
                wire_api: Some(WireApi::Chat),
                ..ProviderToml::default()
            })
        }
    }
}

/// The built-in local providers (Chat Completions, no key) and their default ports. `oss`
/// is the one `--oss` picks, on Ollama's port; `--local-provider` picks another.
pub const LOCAL_PROVIDERS: &[(&str, u16)] = &[
    ("oss", 11434),
    ("ollama", 11434),
    ("lmstudio", 1234),
    ("vllm", 8000),
    ("llamacpp", 8080),
];

/// Base URL of a built-in local provider: `TROUPE_OSS_BASE_URL` if set, else
/// `http://127.0.0.1:PORT/v1` with `TROUPE_OSS_PORT` or the server's default port.
pub fn local_base_url(id: &str) -> Option<String> {
    let (_, default_port) = LOCAL_PROVIDERS.iter().find(|(local, _)| *local == id)?;
    if let Some(url) = std::env::var("TROUPE_OSS_BASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
    {
        return Some(url);
    }
    let port = std::env::var("TROUPE_OSS_PORT")
        .ok()
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(*default_port);
    Some(format!("http://127.0.0.1:{port}/v1"))
}

fn resolve_provider(id: &str, config: &ConfigToml) -> Result<ProviderSettings, ConfigError> {
    let user = config.model_providers.get(id);
    let builtin = builtin_provider(id);
    let base = match (user, builtin) {
        (Some(user), Some(builtin)) => merge_provider(builtin, user.clone()),
        (Some(user), None) => user.clone(),
        (None, Some(builtin)) => builtin,
        (None, None) => {
            let mut known: Vec<&str> = config.model_providers.keys().map(String::as_str).collect();
            known.push("openai");
            known.extend(LOCAL_PROVIDERS.iter().map(|(local, _)| *local));
            known.sort_unstable();
            known.dedup();
            return Err(ConfigError::UnknownProvider {
                id: id.to_string(),
                known: known.join(", "),
            });
        }
    };
    let base_url = base.base_url.ok_or_else(|| ConfigError::InvalidKey {
        key: format!("model_providers.{id}.base_url"),
        message: "missing; every provider needs a base_url".into(),
    })?;
    check_base_url(id, &base_url)?;
    let wire_api = base.wire_api.unwrap_or_default();
    let websockets = base.supports_websockets.unwrap_or(false);
    if websockets && wire_api != WireApi::Responses {
        return Err(ConfigError::InvalidKey {
            key: format!("model_providers.{id}.supports_websockets"),
            message: "only the `responses` wire_api has a WebSocket transport".into(),
        });
    }
    Ok(ProviderSettings {
        id: id.to_string(),
        name: base.name.unwrap_or_else(|| id.to_string()),
        base_url: base_url.trim_end_matches('/').to_string(),
        wire_api,
        env_key: base.env_key.filter(|k| !k.is_empty()),
        http_headers: base.http_headers,
        request_max_retries: base.request_max_retries.unwrap_or(4).min(100),
        stream_max_retries: base.stream_max_retries.unwrap_or(5).min(100),
        stream_idle_timeout_ms: base.stream_idle_timeout_ms.unwrap_or(300_000),
        request_timeout_ms: base.request_timeout_ms.unwrap_or(60_000),
        stream_max_bytes: base.stream_max_bytes.unwrap_or(DEFAULT_STREAM_MAX_BYTES),
        stream_max_duration_ms: base
            .stream_max_duration_ms
            .unwrap_or(DEFAULT_STREAM_MAX_DURATION_MS),
        supports_websockets: websockets,
        replay: None,
    })
}

/// A base URL that cannot be requested is a config error now, not four retries later.
fn check_base_url(id: &str, base_url: &str) -> Result<(), ConfigError> {
    let invalid = |why: String| ConfigError::InvalidKey {
        key: format!("model_providers.{id}.base_url"),
        message: format!(
            "`{base_url}` is not a usable URL: {why}; expected e.g. `https://api.example.com/v1`"
        ),
    };
    let url = url::Url::parse(base_url).map_err(|err| invalid(err.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "the scheme is `{}`, not http or https",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("it names no host".into()));
    }
    Ok(())
}

fn merge_provider(builtin: ProviderToml, user: ProviderToml) -> ProviderToml {
    let mut headers = builtin.http_headers;
    headers.extend(user.http_headers);
    ProviderToml {
        name: user.name.or(builtin.name),
        base_url: user.base_url.or(builtin.base_url),
        wire_api: user.wire_api.or(builtin.wire_api),
        env_key: user.env_key.or(builtin.env_key),
        http_headers: headers,
        request_max_retries: user.request_max_retries.or(builtin.request_max_retries),
        stream_max_retries: user.stream_max_retries.or(builtin.stream_max_retries),
        stream_idle_timeout_ms: user
            .stream_idle_timeout_ms
            .or(builtin.stream_idle_timeout_ms),
        request_timeout_ms: user.request_timeout_ms.or(builtin.request_timeout_ms),
        stream_max_bytes: user.stream_max_bytes.or(builtin.stream_max_bytes),
        stream_max_duration_ms: user
            .stream_max_duration_ms
            .or(builtin.stream_max_duration_ms),
        supports_websockets: user.supports_websockets.or(builtin.supports_websockets),
    }
}

/// `[sandbox_workspace_write]` + `sandbox_deny_read` + `sandbox_backend` → settings. Paths are
/// checked (absolute, existing) when a command runs, where the error reaches the user.
/// Whether `requirements.toml` leaves only `read-only`: then no `request_permissions` grant
/// may add a writable root or the network (a grant never goes beyond the requirements).
fn grants_forbidden(requirements: &Requirements) -> bool {
    requirements
        .allowed_sandbox_modes
        .as_ref()
        .is_some_and(|modes| modes.iter().all(|m| *m == SandboxMode::ReadOnly))
}

fn sandbox_settings(
    write: SandboxWorkspaceWriteToml,
    deny_read: Vec<PathBuf>,
    backend: Option<SandboxBackendKind>,
    grants_forbidden: bool,
    proxy: crate::file::NetworkProxyToml,
) -> SandboxSettings {
    SandboxSettings {
        grants_forbidden,
        network_proxy: NetworkProxySettings {
            enabled: proxy.enabled,
            port: proxy.port.map_or(DEFAULT_PROXY_PORT, u16::from),
            hosts: proxy
                .hosts
                .into_iter()
                .map(|(host, ip)| (host.to_ascii_lowercase(), ip.to_string()))
                .collect(),
            allow_local_names: proxy
                .allow_local_names
                .iter()
                .map(|name| name.to_ascii_lowercase())
                .collect(),
        },
        writable_roots: write
            .writable_roots
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        network_access: write.network_access,
        exclude_tmpdir_env_var: write.exclude_tmpdir_env_var,
        exclude_slash_tmp: write.exclude_slash_tmp,
        deny_read,
        allow_unix_sockets: write
            .allow_unix_sockets
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        backend: backend.unwrap_or_default(),
        ..SandboxSettings::default()
    }
}
