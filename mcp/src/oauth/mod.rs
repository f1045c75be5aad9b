//! OAuth for streamable-HTTP MCP servers, as Codex does it: `troupe mcp login` obtains
//! tokens ([`login`]), they are kept in `$TROUPE_HOME/.credentials.json` ([`store`]), and
//! connections send and refresh them ([`client`]). rmcp's `auth` feature does the protocol
//! work (discovery, registration, PKCE, token exchange and refresh).

pub mod callback;
pub mod client;
pub mod login;
pub mod store;

use std::path::PathBuf;
use std::time::Duration;
use troupe_messages::mcp::{McpServerSettings, McpTransport};

/// How long `troupe mcp list` waits for a server to say whether it supports OAuth.
const DISCOVERY_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why an OAuth step failed. No variant carries a token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("cannot read {path}: {reason}")]
    BadCredentialsFile { path: PathBuf, reason: String },
    #[error("cannot write {path}: {source}")]
    WriteCredentialsFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "no OAuth authorization server found for {url} (neither protected-resource nor \
         authorization-server metadata): the server does not support OAuth login"
    )]
    NoAuthorizationServer { url: String },
    #[error("cannot listen for the OAuth callback on 127.0.0.1: {0}")]
    CallbackListener(std::io::Error),
    #[error(
        "timed out after {seconds} s waiting for the OAuth callback: open the URL, \
         authorize, then run `troupe mcp login` again if it expired"
    )]
    CallbackTimeout { seconds: u64 },
    #[error("{}", provider_message(.error, .description))]
    Provider {
        error: Option<String>,
        description: Option<String>,
    },
    #[error("{0}")]
    Flow(String),
}

fn provider_message(error: &Option<String>, description: &Option<String>) -> String {
    match (error, description) {
        (Some(error), Some(description)) => {
            format!("OAuth provider returned `{error}`: {description}")
        }
        (Some(error), None) => format!("OAuth provider returned `{error}`"),
        (None, Some(description)) => format!("OAuth error: {description}"),
        (None, None) => "OAuth provider returned an error".into(),
    }
}

/// Codex's auth column of `mcp list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpAuthStatus {
    Unsupported,
    NotLoggedIn,
    BearerToken,
    OAuth,
}

impl McpAuthStatus {
    /// The words of the table.
    pub fn label(self) -> &'static str {
        match self {
            Self::Unsupported => "Unsupported",
            Self::NotLoggedIn => "Not logged in",
            Self::BearerToken => "Bearer token",
            Self::OAuth => "OAuth",
        }
    }

    /// The `auth_status` of `--json` (Codex's snake_case serialization).
    pub fn json_name(self) -> &'static str {
        match self {
            Self::Unsupported => "unsupported",
            Self::NotLoggedIn => "not_logged_in",
            Self::BearerToken => "bearer_token",
            Self::OAuth => "o_auth",
        }
    }
}

/// The auth status of one server, as Codex computes it: stdio servers have none; a
/// `bearer_token_env_var` wins; then stored tokens; else whether the server advertises
/// OAuth (a network probe bounded by [`DISCOVERY_PROBE_TIMEOUT`]).
pub async fn auth_status(
    name: &str,
    settings: &McpServerSettings,
    http_client: reqwest::Client,
) -> Result<McpAuthStatus, OAuthError> {
    let McpTransport::StreamableHttp {
        url,
        bearer_token_env_var,
        ..
    } = &settings.transport
    else {
        return Ok(McpAuthStatus::Unsupported);
    };
    if bearer_token_env_var.is_some() {
        return Ok(McpAuthStatus::BearerToken);
    }
    if let Some(path) = &settings.oauth_credentials_file {
        let file = store::CredentialsFile::new(path);
        if file.load(&store::ServerKey::new(name, url))?.is_some() {
            return Ok(McpAuthStatus::OAuth);
        }
    }
    let probe = async {
        let mut manager = rmcp::transport::AuthorizationManager::new(url.as_str())
            .await
            .ok()?;
        manager.with_client(http_client).ok()?;
        manager.discover_metadata().await.ok()
    };
    Ok(
        match tokio::time::timeout(DISCOVERY_PROBE_TIMEOUT, probe).await {
            Ok(Some(_)) => McpAuthStatus::NotLoggedIn,
            Ok(None) | Err(_) => McpAuthStatus::Unsupported,
        },
    )
}
