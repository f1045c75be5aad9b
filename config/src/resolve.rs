//! From files and overrides to the settings a thread runs under.

use crate::error::ConfigError;
use crate::file::{ConfigToml, ProviderToml};
use crate::overrides::{apply_override, parse_override};
use std::path::{Path, PathBuf};
use toml::Table;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{ProviderSettings, SessionSettings, ToolSettings, WireApi};

/// The model used when config names none.
pub const DEFAULT_MODEL: &str = "gpt-5.1-codex";
/// Built-in instructions sent with every request unless `instructions` replaces them.
pub const BASE_INSTRUCTIONS: &str = include_str!("base_instructions.md");

/// What the command line adds on top of the files.
#[derive(Debug, Clone, Default)]
pub struct CliOverrides {
    /// Raw `-c key=value` strings, in order.
    pub raw: Vec<String>,
    pub model: Option<String>,
    pub sandbox_mode: Option<SandboxMode>,
    pub approval_policy: Option<AskForApproval>,
    pub cwd: Option<PathBuf>,
}

/// Loads `home/config.toml` (absent is fine), applies overrides and resolves settings.
pub fn load_settings(home: &Path, cli: &CliOverrides) -> Result<SessionSettings, ConfigError> {
    let path = home.join("config.toml");
    let mut table = read_table(&path)?;
    for raw in &cli.raw {
        apply_override(&mut table, &parse_override(raw)?)?;
    }
    let config: ConfigToml =
        serde_path_to_error::deserialize(table).map_err(|err| ConfigError::InvalidKey {
            key: err.path().to_string(),
            message: err.inner().to_string(),
        })?;
    resolve(config, home, cli)
}

/// Reads and type-checks the file alone first, so its errors carry a line number.
fn read_table(path: &Path) -> Result<Table, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Table::new()),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let parse_error = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    toml::from_str::<ConfigToml>(&text).map_err(|err| parse_error(err.to_string()))?;
    toml::from_str::<Table>(&text).map_err(|err| parse_error(err.to_string()))
}

fn resolve(
    config: ConfigToml,
    home: &Path,
    cli: &CliOverrides,
) -> Result<SessionSettings, ConfigError> {
    let provider_id = config
        .model_provider
        .clone()
        .unwrap_or_else(|| "openai".to_string());
    let provider = resolve_provider(&provider_id, &config)?;
    let cwd = match &cli.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|source| ConfigError::Read {
            path: PathBuf::from("."),
            source,
        })?,
    };
    Ok(SessionSettings {
        model: cli
            .model
            .clone()
            .or(config.model)
            .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
        provider,
        cwd,
        approval_policy: cli
            .approval_policy
            .or(config.approval_policy)
            .unwrap_or_default(),
        sandbox_mode: cli.sandbox_mode.or(config.sandbox_mode).unwrap_or_default(),
        base_instructions: config
            .instructions
            .unwrap_or_else(|| BASE_INSTRUCTIONS.to_string()),
        tool_output_max_bytes: config.tool_output_max_bytes.unwrap_or(16 * 1024),
        default_shell_timeout_ms: config.shell_timeout_ms.unwrap_or(10 * 60 * 1000),
        troupe_home: home.to_path_buf(),
        tools: ToolSettings {
            apply_patch: config.apply_patch_tool_type.unwrap_or_default(),
            shell: config.shell_tool_type.unwrap_or_default(),
        },
    })
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
        _ => None,
    }
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
            known.sort_unstable();
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
    Ok(ProviderSettings {
        id: id.to_string(),
        name: base.name.unwrap_or_else(|| id.to_string()),
        base_url: base_url.trim_end_matches('/').to_string(),
        wire_api: base.wire_api.unwrap_or_default(),
        env_key: base.env_key.filter(|k| !k.is_empty()),
        http_headers: base.http_headers,
        request_max_retries: base.request_max_retries.unwrap_or(4).min(100),
        stream_max_retries: base.stream_max_retries.unwrap_or(5).min(100),
        stream_idle_timeout_ms: base.stream_idle_timeout_ms.unwrap_or(300_000),
        request_timeout_ms: base.request_timeout_ms.unwrap_or(60_000),
    })
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
    }
}
