//! Troupe's app-server: Codex's app-server JSON-RPC dialect over stdio, a unix socket or
//! WebSocket, as a frontend over the in-process `Runtime` (no second turn loop).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

pub mod command_exec;
pub mod connection;
pub mod fs_methods;
pub mod fuzzy_search;
pub mod held;
pub mod hub;
pub mod items_list;
pub mod last_turns;
pub mod live;
pub mod methods;
pub mod revert;
pub mod review;
pub mod rewind;
pub mod sinks;
pub mod skills_list;
pub mod slice;
pub mod thread_fields;
mod token_file;
pub mod transport;
pub mod turn_settings;
pub mod turns_list;
pub mod web;

use hub::Hub;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use thiserror::Error;
use troupe_actors::runtime::Runtime;
use troupe_actors::thread_store::ThreadStore;

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Stdio,
    Unix(PathBuf),
    Ws(SocketAddr),
}

impl std::str::FromStr for Listen {
    type Err = String;
    fn from_str(value: &str) -> Result<Self, String> {
        if value == "stdio://" || value == "stdio" {
            return Ok(Listen::Stdio);
        }
        if let Some(path) = value.strip_prefix("unix://") {
            if path.is_empty() {
                return Err("unix:// needs a path: unix:///path/to/socket".into());
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        if let Some(addr) = value.strip_prefix("ws://") {
            return addr
                .parse()
                .map(Listen::Ws)
                .map_err(|_| format!("ws:// needs IP:PORT, got `{addr}`"));
        }
        Err(format!(
            "cannot listen on `{value}`: use stdio://, unix://PATH or ws://IP:PORT"
        ))
    }
}

/// How to run the server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: Listen,
    pub home: PathBuf,
    /// `-c key=value` overrides for every thread.
    pub overrides: Vec<String>,
    pub ws_token: Option<String>,
    /// Whether the (generated) token is written under the home and announced on stderr.
    pub token_file: TokenFile,
    pub allowed_origins: Vec<String>,
    /// Unload threads idle for longer than this (reloaded on their next use).
    pub idle_unload: Option<std::time::Duration>,
    /// Serve the supervisor web page on the WebSocket's port (`--web`).
    pub web: bool,
}

/// Where a generated WebSocket token goes besides the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TokenFile {
    /// Nowhere: the user gave the token, or the page URL carries it.
    #[default]
    None,
    /// `$TROUPE_HOME/app-server/ws-PORT.token` (0600, in a 0700 directory), its path and the
    /// token on stderr.
    Write,
}

#[derive(Debug, Error)]
pub enum ServeError {
    #[error("refusing to listen on {0} without a capability token: pass --ws-token-file")]
    NoToken(SocketAddr),
    #[error("--web serves the page over WebSocket: use --listen ws://IP:PORT")]
    WebNeedsWs,
    #[error("--web needs a capability token: pass --ws-token-file")]
    WebNeedsToken,
    #[error("cannot listen on {what}: {err}")]
    Bind { what: String, err: std::io::Error },
    #[error("cannot write the capability token to {path}: {err}")]
    TokenFile { path: PathBuf, err: std::io::Error },
}

/// Runs the server until stdin closes (stdio) or forever (sockets).
pub async fn serve(
    options: ServeOptions,
    runtime: Runtime,
    store: Option<Arc<ThreadStore>>,
) -> Result<(), ServeError> {
    if let Listen::Ws(addr) = &options.listen {
        if !addr.ip().is_loopback() && options.ws_token.is_none() {
            return Err(ServeError::NoToken(*addr));
        }
    }
    if options.web {
        if !matches!(options.listen, Listen::Ws(_)) {
            return Err(ServeError::WebNeedsWs);
        }
        if options.ws_token.is_none() {
            return Err(ServeError::WebNeedsToken);
        }
    }
    let hub = Hub::new(
        runtime,
        options.home.clone(),
        options.overrides,
        store,
        options.idle_unload,
    );
    match options.listen {
        Listen::Stdio => transport::serve_stdio(hub.clone()).await,
        Listen::Unix(path) => {
            let listener = transport::bind_unix(&path).map_err(|err| ServeError::Bind {
                what: path.display().to_string(),
                err,
            })?;
            eprintln!("troupe app-server listening on unix://{}", path.display());
            transport::serve_unix(hub.clone(), listener, path).await;
        }
        Listen::Ws(addr) => {
            let listener =
                tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|err| ServeError::Bind {
                        what: addr.to_string(),
                        err,
                    })?;
            let bound = listener.local_addr().unwrap_or(addr);
            eprintln!("troupe app-server listening on ws://{bound}");
            if let (TokenFile::Write, Some(token)) = (options.token_file, &options.ws_token) {
                let path = options
                    .home
                    .join("app-server")
                    .join(format!("ws-{}.token", bound.port()));
                token_file::write(&path, token).map_err(|err| ServeError::TokenFile {
                    path: path.clone(),
                    err,
                })?;
                // Whoever started the server reads it here or from the file (only its
                // owner can); clients send `Authorization: Bearer TOKEN`.
                eprintln!(
                    "troupe app-server capability token: {token} (also in {}; clients send \
                     `Authorization: Bearer TOKEN`)",
                    path.display()
                );
            }
            let mut allowed_origins = options.allowed_origins;
            let page = options.web.then(|| web::WebPage::new(bound));
            if let Some(page) = &page {
                allowed_origins.extend(page.own_origins());
                // The one place the token is shown: stdout, to whoever started the server
                // (never a log line), alone on its line so a script can read it.
                let token = options.ws_token.as_deref().unwrap_or_default();
                println!("{}", web::page_url(bound, token));
            }
            let auth = transport::WsAuth {
                token: options.ws_token,
                allowed_origins,
            };
            transport::serve_ws(hub.clone(), listener, auth, page).await;
        }
    }
    // The client went away (stdin closed): each running turn's end is recorded.
    hub.shutdown().await;
    Ok(())
}
