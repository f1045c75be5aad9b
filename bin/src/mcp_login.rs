//! `troupe mcp login NAME [--scopes a,b]` / `troupe mcp logout NAME`: OAuth tokens of a
//! streamable-HTTP server, kept in `$TROUPE_HOME/.credentials.json`. Wording as Codex's.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use troupe_config::resolve::{load_settings, CliOverrides};
use troupe_mcp::connection::http_client;
use troupe_mcp::oauth::login::{LoginRequest, PendingLogin};
use troupe_mcp::oauth::store::{CredentialsFile, ServerKey};
use troupe_messages::mcp::{McpServerSettings, McpTransport, MCP_CREDENTIALS_FILE};

/// How long the login waits for the browser to come back (Codex's default).
const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);
/// Discovery and registration: a few requests to the servers, before the user is involved.
const SETUP_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Name of the MCP server to authenticate with.
    name: String,
    /// Comma-separated list of OAuth scopes to request.
    #[arg(long, value_delimiter = ',', value_name = "SCOPE,SCOPE")]
    scopes: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// Name of the MCP server to deauthenticate.
    name: String,
}

/// The server's URL and configured headers; an unknown name or a stdio server is an error.
fn http_server(
    servers: &BTreeMap<String, McpServerSettings>,
    name: &str,
    verb: &str,
) -> Result<(String, reqwest::Client)> {
    let server = servers
        .get(name)
        .ok_or_else(|| anyhow!("No MCP server named '{name}' found."))?;
    match &server.transport {
        McpTransport::StreamableHttp {
            url,
            http_headers,
            env_http_headers,
            ..
        } => Ok((
            url.clone(),
            http_client(name, http_headers, env_http_headers)?,
        )),
        McpTransport::Stdio { .. } => bail!(
            "OAuth {verb} is only supported for streamable HTTP servers: '{name}' is a stdio \
             server (it has a `command`, not a `url`)."
        ),
    }
}

pub async fn login(home: &Path, args: LoginArgs) -> Result<()> {
    let servers = load_settings(home, &CliOverrides::default())?.mcp_servers;
    let name = args.name;
    let (url, client) = http_server(&servers, &name, "login")?;
    let scopes = args
        .scopes
        .into_iter()
        .map(|scope| scope.trim().to_string())
        .filter(|scope| !scope.is_empty())
        .collect();
    let start = PendingLogin::start(LoginRequest {
        server: ServerKey::new(&name, &url),
        http_client: client,
        scopes,
        credentials: CredentialsFile::new(home.join(MCP_CREDENTIALS_FILE)),
    });
    let pending = tokio::time::timeout(SETUP_TIMEOUT, start)
        .await
        .map_err(|_| {
            anyhow!(
                "the OAuth discovery and client registration of '{name}' did not finish within \
                 {} s",
                SETUP_TIMEOUT.as_secs()
            )
        })?
        .with_context(|| format!("OAuth login to MCP server '{name}' failed"))?;
    let auth_url = pending.authorization_url();
    println!("Authorize `{name}` by opening this URL in your browser:\n{auth_url}\n");
    if webbrowser::open(auth_url).is_err() {
        eprintln!("(Browser launch failed; please copy the URL above manually.)");
    }
    pending
        .finish(CALLBACK_TIMEOUT)
        .await
        .with_context(|| format!("OAuth login to MCP server '{name}' failed"))?;
    println!("Successfully logged in to MCP server '{name}'.");
    Ok(())
}

pub fn logout(home: &Path, args: LogoutArgs) -> Result<()> {
    let servers = load_settings(home, &CliOverrides::default())?.mcp_servers;
    let name = args.name;
    let url = match servers.get(&name).map(|server| &server.transport) {
        None => bail!("No MCP server named '{name}' found in configuration."),
        Some(McpTransport::StreamableHttp { url, .. }) => url.clone(),
        Some(McpTransport::Stdio { .. }) => {
            bail!("OAuth logout is only supported for streamable_http transports.")
        }
    };
    let file = CredentialsFile::new(home.join(MCP_CREDENTIALS_FILE));
    let removed = file
        .remove(&ServerKey::new(&name, &url))
        .context("failed to delete OAuth credentials")?;
    if !removed {
        bail!("No OAuth credentials stored for '{name}'.");
    }
    println!("Removed OAuth credentials for '{name}'.");
    Ok(())
}
