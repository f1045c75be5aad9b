//! `troupe mcp list|get|add|remove|login|logout`: the `[mcp_servers.<id>]` entries of the
//! user config, in Codex's shapes. `add`/`remove` edit `$TROUPE_HOME/config.toml` keeping
//! its comments and layout, and check the result before writing it.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use troupe_config::resolve::{load_settings, CliOverrides};
use troupe_mcp::connection::http_client;
use troupe_mcp::oauth::{auth_status, McpAuthStatus};
use troupe_messages::mcp::{McpServerSettings, McpTransport};

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List configured MCP servers.
    List(ListArgs),
    /// Show one configured MCP server.
    Get(GetArgs),
    /// Add a server entry to the user config.
    Add(AddArgs),
    /// Remove a server entry from the user config.
    Remove(NameArg),
    /// Log in to a streamable HTTP server with OAuth.
    Login(LoginArgs),
    /// Remove the stored OAuth credentials of a server.
    Logout(LogoutArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output the configured servers as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// Name of the MCP server to display.
    name: String,
    /// Output the server configuration as JSON.
    #[arg(long)]
    json: bool,
}

use crate::mcp_login::{LoginArgs, LogoutArgs};

#[derive(Debug, Args)]
pub struct NameArg {
    /// Name of the MCP server.
    name: String,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// Name for the MCP server configuration.
    name: String,
    /// Environment variables to set when launching the server (stdio only).
    #[arg(long, value_parser = parse_env_pair, value_name = "KEY=VALUE")]
    env: Vec<(String, String)>,
    /// URL of a streamable HTTP server (instead of a command).
    #[arg(long, conflicts_with = "command")]
    url: Option<String>,
    /// Variable holding a bearer token for the HTTP server.
    #[arg(long, requires = "url")]
    bearer_token_env_var: Option<String>,
    /// Command to launch the MCP server, after `--`.
    #[arg(trailing_var_arg = true, num_args = 0..)]
    command: Vec<String>,
}

pub async fn run(home: &Path, command: McpCommand) -> Result<()> {
    match command {
        McpCommand::List(args) => list(home, args).await,
        McpCommand::Get(args) => get(home, args).await,
        McpCommand::Add(args) => add(home, args),
        McpCommand::Remove(args) => remove(home, &args.name),
        McpCommand::Login(args) => crate::mcp_login::login(home, args).await,
        McpCommand::Logout(args) => crate::mcp_login::logout(home, args),
    }
}

/// Each server's auth column, probed in parallel (a probe is bounded in time).
async fn auth_statuses(
    servers: &BTreeMap<String, McpServerSettings>,
) -> Result<BTreeMap<String, McpAuthStatus>> {
    let probes = servers.iter().map(|(name, server)| async move {
        let client = match &server.transport {
            McpTransport::StreamableHttp {
                http_headers,
                env_http_headers,
                ..
            } => http_client(name, http_headers, env_http_headers)?,
            McpTransport::Stdio { .. } => reqwest::Client::new(),
        };
        let status = auth_status(name, server, client).await?;
        Ok::<_, anyhow::Error>((name.clone(), status))
    });
    futures::future::join_all(probes)
        .await
        .into_iter()
        .collect()
}

fn configured(home: &Path) -> Result<BTreeMap<String, McpServerSettings>> {
    Ok(load_settings(home, &CliOverrides::default())?.mcp_servers)
}

fn masked_env(env: &BTreeMap<String, String>) -> String {
    if env.is_empty() {
        return "-".into();
    }
    env.keys()
        .map(|key| format!("{key}=*****"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn status(server: &McpServerSettings) -> &'static str {
    if server.enabled {
        "enabled"
    } else {
        "disabled"
    }
}

fn to_json(name: &str, server: &McpServerSettings, auth: McpAuthStatus) -> serde_json::Value {
    let transport = match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => json!({"type": "stdio", "command": command, "args": args,
            "env": if env.is_empty() { None } else { Some(env) },
            "env_vars": env_vars, "cwd": cwd}),
        McpTransport::StreamableHttp {
            url,
            bearer_token_env_var,
            http_headers,
            env_http_headers,
        } => json!({"type": "streamable_http", "url": url,
            "bearer_token_env_var": bearer_token_env_var,
            "http_headers": if http_headers.is_empty() { None } else { Some(http_headers) },
            "env_http_headers": if env_http_headers.is_empty() { None } else { Some(env_http_headers) }}),
    };
    json!({
        "name": name,
        "enabled": server.enabled,
        "transport": transport,
        "startup_timeout_sec": server.startup_timeout_ms as f64 / 1000.0,
        "tool_timeout_sec": server.tool_timeout_ms as f64 / 1000.0,
        "auth_status": auth.json_name(),
    })
}

async fn list(home: &Path, args: ListArgs) -> Result<()> {
    let servers = configured(home)?;
    let auth = auth_statuses(&servers).await?;
    let auth_of = |name: &str| {
        auth.get(name)
            .copied()
            .unwrap_or(McpAuthStatus::Unsupported)
    };
    if args.json {
        let entries: Vec<_> = servers
            .iter()
            .map(|(n, s)| to_json(n, s, auth_of(n)))
            .collect();
        println!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(());
    }
    if servers.is_empty() {
        println!("No MCP servers configured yet. Try `troupe mcp add my-tool -- my-command`.");
        return Ok(());
    }
    let mut stdio =
        vec![["Name", "Command", "Args", "Env", "Cwd", "Status", "Auth"].map(String::from)];
    let mut http =
        vec![["Name", "Url", "Bearer Token Env Var", "Status", "Auth"].map(String::from)];
    for (name, server) in &servers {
        match &server.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
                ..
            } => stdio.push([
                name.clone(),
                command.clone(),
                if args.is_empty() {
                    "-".into()
                } else {
                    args.join(" ")
                },
                masked_env(env),
                cwd.as_ref().map_or("-".into(), |c| c.display().to_string()),
                status(server).into(),
                auth_of(name).label().into(),
            ]),
            McpTransport::StreamableHttp {
                url,
                bearer_token_env_var,
                ..
            } => http.push([
                name.clone(),
                url.clone(),
                bearer_token_env_var.clone().unwrap_or_else(|| "-".into()),
                status(server).into(),
                auth_of(name).label().into(),
            ]),
        }
    }
    if stdio.len() > 1 {
        print_table(&stdio);
    }
    if http.len() > 1 {
        if stdio.len() > 1 {
            println!();
        }
        print_table(&http);
    }
    Ok(())
}

fn print_table<const N: usize>(rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| format!("{cell:<width$}", width = widths[i]))
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
}

async fn get(home: &Path, args: GetArgs) -> Result<()> {
    let servers = configured(home)?;
    let Some(server) = servers.get(&args.name) else {
        bail!("No MCP server named '{}' found.", args.name);
    };
    if args.json {
        let single = BTreeMap::from([(args.name.clone(), server.clone())]);
        let auth = auth_statuses(&single)
            .await?
            .remove(&args.name)
            .unwrap_or(McpAuthStatus::Unsupported);
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(&args.name, server, auth))?
        );
        return Ok(());
    }
    println!("{}", args.name);
    println!("  enabled: {}", server.enabled);
    match &server.transport {
        McpTransport::Stdio {
            command,
            args: argv,
            env,
            env_vars,
            cwd,
        } => {
            println!("  transport: stdio");
            println!("  command: {command}");
            println!(
                "  args: {}",
                if argv.is_empty() {
                    "-".into()
                } else {
                    argv.join(" ")
                }
            );
            println!(
                "  cwd: {}",
                cwd.as_ref().map_or("-".into(), |c| c.display().to_string())
            );
            println!("  env: {}", masked_env(env));
            if !env_vars.is_empty() {
                println!("  env_vars: {}", env_vars.join(", "));
            }
        }
        McpTransport::StreamableHttp {
            url,
            bearer_token_env_var,
            http_headers,
            ..
        } => {
            println!("  transport: streamable_http");
            println!("  url: {url}");
            println!(
                "  bearer_token_env_var: {}",
                bearer_token_env_var.as_deref().unwrap_or("-")
            );
            println!("  http_headers: {}", masked_env(http_headers));
        }
    }
    println!(
        "  startup_timeout_sec: {}",
        server.startup_timeout_ms as f64 / 1000.0
    );
    println!(
        "  tool_timeout_sec: {}",
        server.tool_timeout_ms as f64 / 1000.0
    );
    println!("  remove: troupe mcp remove {}", args.name);
    Ok(())
}

fn add(home: &Path, args: AddArgs) -> Result<()> {
    validate_server_name(&args.name)?;
    let mut entry = toml_edit::Table::new();
    match (&args.url, args.command.split_first()) {
        (Some(url), None) => {
            if !args.env.is_empty() {
                bail!("--env applies to stdio servers; an HTTP server takes no environment");
            }
            entry["url"] = toml_edit::value(url.as_str());
            if let Some(var) = &args.bearer_token_env_var {
                entry["bearer_token_env_var"] = toml_edit::value(var.as_str());
            }
        }
        (None, Some((command, rest))) => {
            entry["command"] = toml_edit::value(command.as_str());
            if !rest.is_empty() {
                entry["args"] = toml_edit::value(rest.iter().collect::<toml_edit::Array>());
            }
            if !args.env.is_empty() {
                let mut env = toml_edit::InlineTable::new();
                for (key, value) in &args.env {
                    env.insert(key, value.as_str().into());
                }
                entry["env"] = toml_edit::value(env);
            }
        }
        _ => bail!("give a command after `--` (stdio) or `--url URL` (streamable HTTP)"),
    }
    edit_user_config(home, |doc| {
        let servers = doc
            .entry("mcp_servers")
            .or_insert_with(|| {
                let mut table = toml_edit::Table::new();
                table.set_implicit(true);
                toml_edit::Item::Table(table)
            })
            .as_table_mut()
            .context("`mcp_servers` in config.toml is not a table")?;
        servers.insert(&args.name, toml_edit::Item::Table(entry));
        Ok(true)
    })?;
    println!("Added global MCP server '{}'.", args.name);
    Ok(())
}

fn remove(home: &Path, name: &str) -> Result<()> {
    validate_server_name(name)?;
    let removed = edit_user_config(home, |doc| {
        Ok(doc
            .get_mut("mcp_servers")
            .and_then(toml_edit::Item::as_table_mut)
            .and_then(|servers| servers.remove(name))
            .is_some())
    })?;
    if removed {
        println!("Removed global MCP server '{name}'.");
    } else {
        println!("No MCP server named '{name}' found.");
    }
    Ok(())
}

/// Applies `change` to the user config; writes (atomically) only when it changed something
/// and the result still loads.
fn edit_user_config(
    home: &Path,
    change: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<bool>,
) -> Result<bool> {
    let path = home.join("config.toml");
    let text = match troupe_config::regular_file::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", path.display()))?;
    if !change(&mut doc)? {
        return Ok(false);
    }
    let new_text = doc.to_string();
    let mut warnings = Vec::new();
    troupe_config::layers::check_text(&path, &new_text, &mut warnings)
        .context("the edited config would not load; nothing written")?;
    std::fs::create_dir_all(home).with_context(|| format!("cannot create {}", home.display()))?;
    let mut temp = tempfile::NamedTempFile::new_in(home)?;
    std::io::Write::write_all(&mut temp, new_text.as_bytes())?;
    temp.persist(&path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

fn parse_env_pair(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err("environment entries must be in KEY=VALUE form".into()),
    }
}

fn validate_server_name(name: &str) -> Result<()> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        bail!("invalid server name '{name}' (use letters, numbers, '-', '_')");
    }
    Ok(())
}
