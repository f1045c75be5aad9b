//! `[mcp_servers.<id>]`: Codex's keys, checked when the file is read (an unknown key, or a
//! key of the other transport, is an error naming the file and line), resolved into
//! [`McpServerSettings`].

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use troupe_messages::mcp::{
    McpServerSettings, McpToolApproval, McpTransport, DEFAULT_STARTUP_TIMEOUT_MS,
    DEFAULT_TOOL_TIMEOUT_MS,
};

/// One `[mcp_servers.<id>]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawMcpServerToml")]
pub struct McpServerToml(pub McpServerSettings);

/// `[mcp_servers.<id>.tools.<tool>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpToolToml {
    pub approval_mode: Option<McpToolApproval>,
}

/// An `env_vars` entry: a name, or `{ name, source = "local" }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum EnvVarToml {
    Name(String),
    Table {
        name: String,
        source: Option<String>,
    },
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawMcpServerToml {
    // stdio
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    env_vars: Option<Vec<EnvVarToml>>,
    cwd: Option<PathBuf>,
    // streamable HTTP
    url: Option<String>,
    bearer_token_env_var: Option<String>,
    http_headers: Option<BTreeMap<String, String>>,
    env_http_headers: Option<BTreeMap<String, String>>,
    // shared
    startup_timeout_sec: Option<f64>,
    startup_timeout_ms: Option<u64>,
    tool_timeout_sec: Option<f64>,
    enabled: Option<bool>,
    required: Option<bool>,
    supports_parallel_tool_calls: Option<bool>,
    default_tools_approval_mode: Option<McpToolApproval>,
    enabled_tools: Option<Vec<String>>,
    disabled_tools: Option<Vec<String>>,
    tools: Option<BTreeMap<String, McpToolToml>>,
    /// Codex accepts these; Troupe does not implement them (OAuth goes through
    /// `troupe mcp login` with dynamic registration), so they are errors, not ignored.
    bearer_token: Option<toml::Value>,
    oauth: Option<toml::Value>,
    oauth_resource: Option<toml::Value>,
    scopes: Option<toml::Value>,
    experimental_environment: Option<toml::Value>,
    /// Legacy display name Codex still accepts; it names nothing.
    name: Option<String>,
}

impl TryFrom<RawMcpServerToml> for McpServerToml {
    type Error = String;

    fn try_from(raw: RawMcpServerToml) -> Result<Self, String> {
        for (key, set) in [
            ("bearer_token", raw.bearer_token.is_some()),
            ("oauth", raw.oauth.is_some()),
            ("oauth_resource", raw.oauth_resource.is_some()),
            ("scopes", raw.scopes.is_some()),
            (
                "experimental_environment",
                raw.experimental_environment.is_some(),
            ),
        ] {
            if set {
                return Err(format!(
                    "`{key}` is not supported by troupe (no static bearer token, OAuth \
                     client settings or remote environments): use `troupe mcp login` or \
                     `bearer_token_env_var`"
                ));
            }
        }
        let _ = raw.name;
        // `false` is what troupe does anyway; `true` asks for something it does not do.
        if raw.required == Some(true) {
            return Err(
                "`required = true` is not supported by troupe: a server that fails to \
                        start is a warning and the turn goes on without it"
                    .into(),
            );
        }
        if raw.supports_parallel_tool_calls == Some(true) {
            return Err(
                "`supports_parallel_tool_calls = true` is not supported by troupe: the \
                        MCP calls of one response run one after another"
                    .into(),
            );
        }
        let transport = transport(&raw)?;
        let seconds = |key: &str, value: f64| -> Result<u64, String> {
            if value.is_finite() && (0.0..=86_400.0).contains(&value) {
                Ok((value * 1000.0).round() as u64)
            } else {
                Err(format!(
                    "`{key}` must be a number of seconds between 0 and 86400"
                ))
            }
        };
        let startup_timeout_ms = match (raw.startup_timeout_sec, raw.startup_timeout_ms) {
            (Some(sec), _) => seconds("startup_timeout_sec", sec)?,
            (None, Some(ms)) => ms,
            (None, None) => DEFAULT_STARTUP_TIMEOUT_MS,
        };
        let tool_timeout_ms = match raw.tool_timeout_sec {
            Some(sec) => seconds("tool_timeout_sec", sec)?,
            None => DEFAULT_TOOL_TIMEOUT_MS,
        };
        Ok(Self(McpServerSettings {
            transport,
            enabled: raw.enabled.unwrap_or(true),
            startup_timeout_ms,
            tool_timeout_ms,
            default_tools_approval_mode: raw.default_tools_approval_mode.unwrap_or_default(),
            tool_approval_modes: raw
                .tools
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(tool, config)| config.approval_mode.map(|mode| (tool, mode)))
                .collect(),
            enabled_tools: raw.enabled_tools,
            disabled_tools: raw.disabled_tools.unwrap_or_default(),
            oauth_credentials_file: None,
        }))
    }
}

fn transport(raw: &RawMcpServerToml) -> Result<McpTransport, String> {
    let not_for = |transport: &str, key: &str, set: bool| -> Result<(), String> {
        if set {
            Err(format!("`{key}` is not supported for {transport} servers"))
        } else {
            Ok(())
        }
    };
    match (&raw.command, &raw.url) {
        (Some(_), Some(_)) => {
            Err("set either `command` (stdio) or `url` (streamable HTTP), not both".into())
        }
        (Some(command), None) => {
            not_for(
                "stdio",
                "bearer_token_env_var",
                raw.bearer_token_env_var.is_some(),
            )?;
            not_for("stdio", "http_headers", raw.http_headers.is_some())?;
            not_for("stdio", "env_http_headers", raw.env_http_headers.is_some())?;
            if command.trim().is_empty() {
                return Err("`command` is empty".into());
            }
            let mut env_vars = Vec::new();
            for entry in raw.env_vars.clone().unwrap_or_default() {
                match entry {
                    EnvVarToml::Name(name) => env_vars.push(name),
                    EnvVarToml::Table { name, source } => match source.as_deref() {
                        None | Some("local") => env_vars.push(name),
                        Some(other) => {
                            return Err(format!(
                                "env_vars source `{other}` is not supported; expected `local`"
                            ))
                        }
                    },
                }
            }
            Ok(McpTransport::Stdio {
                command: command.clone(),
                args: raw.args.clone().unwrap_or_default(),
                env: raw.env.clone().unwrap_or_default(),
                env_vars,
                cwd: raw.cwd.clone(),
            })
        }
        (None, Some(url)) => {
            not_for("streamable HTTP", "args", raw.args.is_some())?;
            not_for("streamable HTTP", "env", raw.env.is_some())?;
            not_for("streamable HTTP", "env_vars", raw.env_vars.is_some())?;
            not_for("streamable HTTP", "cwd", raw.cwd.is_some())?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "`url` must start with http:// or https://, got `{url}`"
                ));
            }
            Ok(McpTransport::StreamableHttp {
                url: url.clone(),
                bearer_token_env_var: raw.bearer_token_env_var.clone(),
                http_headers: raw.http_headers.clone().unwrap_or_default(),
                env_http_headers: raw.env_http_headers.clone().unwrap_or_default(),
            })
        }
        (None, None) => {
            Err("an MCP server needs `command` (stdio) or `url` (streamable HTTP)".into())
        }
    }
}

/// The resolved servers of a config, by id, told where `troupe mcp login` keeps tokens.
pub fn resolve(
    servers: BTreeMap<String, McpServerToml>,
    credentials_file: &std::path::Path,
) -> BTreeMap<String, McpServerSettings> {
    servers
        .into_iter()
        .map(|(id, server)| {
            let mut settings = server.0;
            settings.oauth_credentials_file = Some(credentials_file.to_path_buf());
            (id, settings)
        })
        .collect()
}

/// `mcp_oauth_credentials_store`: Codex's `auto` | `file` | `keyring`. Troupe has only the
/// file, so `auto` resolves to it (as Codex's does without a keyring) and `keyring` is an
/// error rather than a silent file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum OAuthCredentialsStoreToml {
    Auto,
    File,
}

impl TryFrom<String> for OAuthCredentialsStoreToml {
    type Error = String;

    fn try_from(value: String) -> Result<Self, String> {
        match value.as_str() {
            "auto" => Ok(Self::Auto),
            "file" => Ok(Self::File),
            "keyring" => Err(
                "`keyring` is not supported by troupe: MCP OAuth tokens are kept \
                 in $TROUPE_HOME/.credentials.json (mode 0600); use \"file\" or \"auto\""
                    .into(),
            ),
            other => Err(format!(
                "unknown value `{other}`: expected \"auto\", \"file\" or \"keyring\""
            )),
        }
    }
}
