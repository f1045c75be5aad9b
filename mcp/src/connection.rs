//! One live connection to an MCP server (stdio child or streamable HTTP), started with a
//! deadline that covers the handshake and the first tool list.

use crate::oauth::client::{OAuthHttpClient, OAuthSession};
use crate::oauth::store::{CredentialsFile, ServerKey};
use crate::McpError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, RequestId, ServerResult, Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use troupe_messages::mcp::{McpServerSettings, McpTransport};

/// Variables a stdio server inherits besides its `env_vars` (what a program needs to find
/// itself and its files; no credentials).
const BASE_ENV_VARS: &[&str] = &[
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
    "NODE_PATH",
    "npm_config_cache",
];

/// A started server and the tools it listed.
pub struct Connection {
    pub(crate) service: RunningService<RoleClient, ()>,
    pub tools: Vec<Tool>,
}

impl Connection {
    /// Starts the server and lists its tools within `settings.startup_timeout_ms`.
    pub async fn start(id: &str, settings: &McpServerSettings) -> Result<Self, McpError> {
        let deadline = Duration::from_millis(settings.startup_timeout_ms);
        let started = tokio::time::timeout(deadline, async {
            let service = match &settings.transport {
                McpTransport::Stdio {
                    command,
                    args,
                    env,
                    env_vars,
                    cwd,
                } => {
                    let transport = child_transport(command, args, env, env_vars, cwd.as_deref())
                        .map_err(|err| McpError::Spawn {
                        server: id.to_string(),
                        command: command.clone(),
                        reason: err.to_string(),
                    })?;
                    ().serve(transport)
                        .await
                        .map_err(|err| McpError::Handshake {
                            server: id.to_string(),
                            reason: err.to_string(),
                        })?
                }
                McpTransport::StreamableHttp {
                    url,
                    bearer_token_env_var,
                    http_headers,
                    env_http_headers,
                } => {
                    let client = http_client(id, http_headers, env_http_headers)?;
                    match (bearer_token_env_var, &settings.oauth_credentials_file) {
                        // Stored OAuth tokens serve only when no bearer token is configured.
                        (None, Some(credentials)) => {
                            serve_with_oauth(id, url, client, credentials).await?
                        }
                        (bearer, _) => {
                            serve_with_bearer(id, url, client, bearer.as_deref()).await?
                        }
                    }
                }
            };
            let tools = service
                .list_all_tools()
                .await
                .map_err(|err| McpError::Handshake {
                    server: id.to_string(),
                    reason: format!("tools/list failed: {err}"),
                })?;
            Ok::<_, McpError>(Self { service, tools })
        })
        .await;
        match started {
            Ok(result) => result,
            Err(_) => Err(McpError::StartupTimeout {
                server: id.to_string(),
                seconds: deadline.as_secs_f64(),
            }),
        }
    }

    /// Whether the server said at the handshake that it has resources.
    pub fn offers_resources(&self) -> bool {
        self.service
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some())
    }

    /// Whether the server went away (process exited, connection closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed()
    }

    /// Calls one tool; the caller bounds it in time. Dropping the future before the answer
    /// (an interrupted turn, `tool_timeout_sec`) tells the server with
    /// `notifications/cancelled`, so it can stop the work.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<CallToolResult, rmcp::ServiceError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest {
            method: Default::default(),
            params: CallToolRequestParams {
                meta: None,
                name: tool.to_string().into(),
                arguments,
                task: None,
            },
            extensions: Default::default(),
        });
        let peer = self.service.peer();
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await?;
        let mut pending = CancelOnDrop {
            peer: peer.clone(),
            request: Some(handle.id.clone()),
        };
        let answer = handle
            .rx
            .await
            .map_err(|_| rmcp::ServiceError::TransportClosed)?;
        pending.request = None;
        match answer? {
            ServerResult::CallToolResult(result) => Ok(result),
            _ => Err(rmcp::ServiceError::UnexpectedResponse),
        }
    }
}

/// A request in flight; dropped unanswered, it sends the server `notifications/cancelled`.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    request: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(request_id) = self.request.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let sent = peer
                .notify_cancelled(CancelledNotificationParam {
                    request_id,
                    reason: Some("the call was cancelled: turn interrupted or tool timeout".into()),
                })
                .await;
            if let Err(err) = sent {
                tracing::debug!(%err, "could not tell the MCP server the call was cancelled");
            }
        });
    }
}

fn child_transport(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    env_vars: &[String],
    cwd: Option<&std::path::Path>,
) -> std::io::Result<TokioChildProcess> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).env_clear();
    for name in BASE_ENV_VARS
        .iter()
        .copied()
        .chain(env_vars.iter().map(String::as_str))
    {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(env);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    cmd.kill_on_drop(true);
    // A server the user configured gets the user's file-creation mask, not the runtime's
    // private one.
    if let Some(mask) = troupe_messages::file_mask::user_mask() {
        // SAFETY: `umask` is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(move || {
                libc::umask(mask as libc::mode_t);
                Ok(())
            });
        }
    }
    // The server's own log lines must not garble the terminal or the JSON output.
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()?;
    Ok(transport)
}

type Service = RunningService<RoleClient, ()>;

/// Streamable HTTP with the token of `bearer_token_env_var`, or none.
async fn serve_with_bearer(
    id: &str,
    url: &str,
    client: reqwest::Client,
    bearer_token_env_var: Option<&str>,
) -> Result<Service, McpError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(var) = bearer_token_env_var {
        let token = std::env::var(var).map_err(|_| McpError::Config {
            server: id.to_string(),
            reason: format!("bearer_token_env_var `{var}` is not set"),
        })?;
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(client, config);
    ().serve(transport)
        .await
        .map_err(|err| McpError::Handshake {
            server: id.to_string(),
            reason: err.to_string(),
        })
}

/// Streamable HTTP with the tokens `troupe mcp login` stored, if any; a 401 they cannot
/// cure says to log in.
async fn serve_with_oauth(
    id: &str,
    url: &str,
    client: reqwest::Client,
    credentials: &std::path::Path,
) -> Result<Service, McpError> {
    let session = Arc::new(OAuthSession::new(
        ServerKey::new(id, url),
        CredentialsFile::new(credentials),
        client.clone(),
    ));
    let transport = StreamableHttpClientTransport::with_client(
        OAuthHttpClient {
            inner: client,
            session: session.clone(),
        },
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    let handshake_failed = |reason: String| McpError::Handshake {
        server: id.to_string(),
        reason,
    };
    match ().serve(transport).await {
        Ok(service) => Ok(service),
        Err(err) if session.was_refused() => {
            tracing::debug!(server = id, %err, "MCP server answered 401");
            let server = id.to_string();
            Err(match session.has_tokens() {
                Ok(true) => McpError::LoginExpired { server },
                Ok(false) => McpError::NotLoggedIn { server },
                Err(file) => handshake_failed(file.to_string()),
            })
        }
        Err(err) => Err(handshake_failed(err.to_string())),
    }
}

/// A client sending the configured headers (`http_headers`, and `env_http_headers` whose
/// variable is set).
pub fn http_client(
    id: &str,
    http_headers: &BTreeMap<String, String>,
    env_http_headers: &BTreeMap<String, String>,
) -> Result<reqwest::Client, McpError> {
    let bad = |reason: String| McpError::Config {
        server: id.to_string(),
        reason,
    };
    let mut headers = reqwest::header::HeaderMap::new();
    let env_headers = env_http_headers
        .iter()
        .filter_map(|(name, var)| std::env::var(var).ok().map(|value| (name, value)));
    for (name, value) in http_headers
        .iter()
        .map(|(n, v)| (n, v.clone()))
        .chain(env_headers)
    {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|err| bad(format!("header `{name}`: {err}")))?;
        let value = reqwest::header::HeaderValue::from_str(&value)
            .map_err(|err| bad(format!("header `{name}`: {err}")))?;
        headers.insert(name, value);
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|err| bad(err.to_string()))
}
