//! `troupe acp`: the Agent Client Protocol (JSON-RPC 2.0 lines over stdio) that editors use
//! to drive an agent, as a frontend over the in-process `Runtime` (no second turn loop).
//! ACP sessions are Troupe threads: the session id is the thread id.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

pub mod commands;
pub mod files;
pub mod protocol;
pub mod replay;
pub mod rpc;
pub mod session;
pub mod updates;

use files::{EditorBridge, SessionFiles};
use protocol::{ClientCapabilities, PROTOCOL_VERSION};
use rpc::{Incoming, Peer, RpcError};
use serde_json::{json, Value};
use session::Command;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};
use troupe_actors::runtime::Runtime;
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::policy::CollaborationMode;
use troupe_messages::settings::SessionSettings;

#[derive(Debug, Error)]
pub enum AcpError {
    #[error("cannot read stdin: {0}")]
    Read(std::io::Error),
}

/// What the server needs besides the runtime.
pub struct AcpOptions {
    pub home: PathBuf,
    /// `-c key=value` overrides for every session.
    pub overrides: Vec<String>,
    /// The bridge the runtime's tool registry was given (`ToolRegistry::with_editor_files`).
    pub files: Arc<EditorBridge>,
}

/// A live session: its task's mailbox and its mode.
struct Session {
    commands: mpsc::UnboundedSender<Command>,
    mode: Mutex<CollaborationMode>,
}

struct Server {
    runtime: Runtime,
    options: AcpOptions,
    peer: Arc<Peer>,
    capabilities: Mutex<ClientCapabilities>,
    sessions: Arc<Mutex<HashMap<String, Arc<Session>>>>,
}

/// Serves one client on `input`/`output` until `input` ends.
pub async fn serve(
    runtime: Runtime,
    options: AcpOptions,
    input: impl AsyncRead + Unpin,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Result<(), AcpError> {
    let server = Arc::new(Server {
        runtime,
        options,
        peer: Peer::spawn(output),
        capabilities: Mutex::new(ClientCapabilities::default()),
        sessions: Arc::new(Mutex::new(HashMap::new())),
    });
    let mut input = BufReader::new(input);
    while let Some(line) = rpc::read_line(&mut input).await.map_err(AcpError::Read)? {
        let line = match line {
            rpc::ReadLine::Line(line) => line,
            rpc::ReadLine::TooLong => {
                let message = format!(
                    "Invalid request: message longer than {} bytes was discarded",
                    rpc::MAX_LINE_BYTES
                );
                let error = RpcError::new(rpc::INVALID_REQUEST, message);
                server.peer.respond(&Value::Null, Err(error)).await;
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match rpc::parse_line(&line) {
            Ok(Incoming::Request { id, method, params }) => {
                let server = server.clone();
                // Requests run concurrently: a prompt answers only when its turn ends.
                tokio::spawn(async move {
                    let loaded = params.get("sessionId").cloned();
                    let outcome = server.handle(&method, params).await;
                    // A client learns a session's commands once the answer named it.
                    let announced = match (&outcome, method.as_str()) {
                        (Ok(result), "session/new") => result.get("sessionId").cloned(),
                        (Ok(_), "session/load") => loaded,
                        _ => None,
                    };
                    server.peer.respond(&id, outcome).await;
                    if let Some(session_id) = announced {
                        server.peer.notify(
                            "session/update",
                            json!({"sessionId": session_id, "update": session::available_commands()}),
                        );
                    }
                });
            }
            Ok(Incoming::Notification { method, params }) => server.notification(&method, params),
            Ok(Incoming::Response { id, outcome }) => {
                if !server.peer.resolve(&id, outcome) {
                    tracing::warn!(%id, "an answer to no request of ours");
                }
            }
            Err((id, error)) => server.peer.respond(&id, Err(error)).await,
        }
    }
    Ok(())
}

impl Server {
    async fn handle(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let params: protocol::InitializeParams = protocol::params(method, params)?;
                let caps = params.client_capabilities;
                if caps.terminal && !caps.terminal_output {
                    tracing::info!(
                        "the client offers terminal/* (it would execute commands itself); Troupe \
                         runs them in its own sandbox and shows their output as tool-call content"
                    );
                }
                if let Ok(mut caps) = self.capabilities.lock() {
                    *caps = params.client_capabilities;
                }
                Ok(protocol::initialize_result(params.protocol_version))
            }
            "authenticate" => Ok(json!({})),
            "session/new" => {
                let params: protocol::NewSessionParams = protocol::params(method, params)?;
                self.new_session(params).await
            }
            "session/load" => {
                let params: protocol::LoadSessionParams = protocol::params(method, params)?;
                self.load_session(params).await
            }
            "session/prompt" => {
                let params: protocol::PromptParams = protocol::params(method, params)?;
                let input = protocol::prompt_input(&params.prompt)?;
                let session = self.session(&params.session_id)?;
                let (reply, answer) = oneshot::channel();
                let op = session::prompt_op(input);
                session
                    .commands
                    .send(Command::Prompt { op, reply })
                    .map_err(|_| RpcError::internal("the session has stopped"))?;
                answer
                    .await
                    .unwrap_or_else(|_| Ok(json!({"stopReason": "cancelled"})))
            }
            "session/set_mode" => {
                let params: protocol::SetModeParams = protocol::params(method, params)?;
                let session = self.session(&params.session_id)?;
                let mode = match params.mode_id.as_str() {
                    "default" => CollaborationMode::Default,
                    "plan" => CollaborationMode::Plan,
                    other => {
                        return Err(RpcError::invalid_params(format!(
                            "unknown mode `{other}`: Troupe has `default` and `plan`"
                        )))
                    }
                };
                if let Ok(mut current) = session.mode.lock() {
                    *current = mode;
                }
                session
                    .commands
                    .send(Command::SetMode(mode))
                    .map_err(|_| RpcError::internal("the session has stopped"))?;
                self.peer.notify(
                    "session/update",
                    json!({"sessionId": params.session_id, "update": {
                        "sessionUpdate": "current_mode_update", "currentModeId": params.mode_id,
                    }}),
                );
                Ok(json!({}))
            }
            _ => Err(RpcError::new(
                rpc::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )),
        }
    }

    fn notification(&self, method: &str, params: Value) {
        match method {
            "session/cancel" => {
                let Ok(params) = protocol::params::<protocol::SessionRef>(method, params) else {
                    tracing::warn!("session/cancel without a sessionId");
                    return;
                };
                // A cancel for a session that does not exist (or has ended) has nothing to stop.
                if let Ok(session) = self.session(&params.session_id) {
                    let _ = session.commands.send(Command::Cancel);
                }
            }
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }

    fn session(&self, id: &str) -> Result<Arc<Session>, RpcError> {
        self.sessions
            .lock()
            .ok()
            .and_then(|sessions| sessions.get(id).cloned())
            .ok_or_else(|| RpcError::new(rpc::RESOURCE_NOT_FOUND, format!("unknown session: {id}")))
    }

    /// Settings of a session at `cwd` with the client's MCP servers, resolved as `exec`
    /// resolves them.
    fn settings(
        &self,
        cwd: &Path,
        servers: &[protocol::McpServer],
    ) -> Result<SessionSettings, RpcError> {
        if !cwd.is_absolute() {
            return Err(RpcError::invalid_params(format!(
                "cwd must be an absolute path, got `{}`",
                cwd.display()
            )));
        }
        let cwd = std::fs::canonicalize(cwd)
            .map_err(|err| RpcError::invalid_params(format!("cwd {}: {err}", cwd.display())))?;
        if !cwd.is_dir() {
            return Err(RpcError::invalid_params(format!(
                "cwd {}: not a directory",
                cwd.display()
            )));
        }
        let mut raw = self.options.overrides.clone();
        raw.extend(protocol::mcp_overrides(servers)?);
        let loaded = load_config(
            &self.options.home,
            &CliOverrides {
                raw,
                cwd: Some(cwd),
                ..CliOverrides::default()
            },
        )
        .map_err(|err| RpcError::invalid_params(err.to_string()))?;
        for warning in &loaded.warnings {
            tracing::warn!("{warning}");
        }
        Ok(loaded.settings)
    }

    async fn new_session(
        self: &Arc<Self>,
        params: protocol::NewSessionParams,
    ) -> Result<Value, RpcError> {
        let settings = self.settings(&params.cwd, &params.mcp_servers)?;
        let mode = settings.context.collaboration_mode;
        let client = self
            .runtime
            .start_thread(settings)
            .await
            .map_err(|err| RpcError::internal(err.to_string()))?;
        let session_id = self.adopt(client, mode, updates::UpdateMapper::default());
        Ok(json!({"sessionId": session_id, "modes": modes(mode)}))
    }

    /// Resumes the thread `sessionId` names: its history goes out as updates, then the
    /// answer.
    async fn load_session(
        self: &Arc<Self>,
        params: protocol::LoadSessionParams,
    ) -> Result<Value, RpcError> {
        let settings = self.settings(&params.cwd, &params.mcp_servers)?;
        // From the rollout files: `troupe acp` keeps no index (see `bin/src/acp.rs`).
        let home = self.options.home.clone();
        let query = params.session_id.clone();
        let summary = tokio::task::spawn_blocking(move || {
            troupe_actors::thread_store::ops::find(&home, None, &query)
        })
        .await
        .map_err(|err| RpcError::internal(err.to_string()))?
        .map_err(|err| RpcError::new(rpc::RESOURCE_NOT_FOUND, err.to_string()))?;
        let session_id = summary.id.to_string();
        if session_id != params.session_id {
            return Err(RpcError::new(
                rpc::RESOURCE_NOT_FOUND,
                format!("unknown session: {}", params.session_id),
            ));
        }
        let rollout = PathBuf::from(&summary.rollout_path);
        let (history, mapper) = replay::history(&self.options.home, &rollout).await;
        for update in history {
            self.peer.notify(
                "session/update",
                json!({"sessionId": session_id, "update": update}),
            );
        }
        let live = self.session(&session_id).ok();
        let mode = match live {
            Some(session) => session.mode.lock().map(|mode| *mode).unwrap_or_default(),
            None => {
                let mode = settings.context.collaboration_mode;
                let client = self
                    .runtime
                    .resume_thread(settings, rollout)
                    .await
                    .map_err(|err| RpcError::internal(err.to_string()))?;
                self.adopt(client, mode, mapper);
                mode
            }
        };
        Ok(json!({"modes": modes(mode)}))
    }

    /// Starts the session's task and registers its files with the editor bridge.
    fn adopt(
        self: &Arc<Self>,
        client: troupe_actors::runtime::ThreadClient,
        mode: CollaborationMode,
        mut mapper: updates::UpdateMapper,
    ) -> String {
        let thread = client.handle.thread_id;
        let session_id = thread.to_string();
        let caps = self.capabilities.lock().map(|c| *c).unwrap_or_default();
        mapper.set_terminal_output(caps.terminal_output);
        self.options.files.register(
            thread,
            SessionFiles {
                peer: self.peer.clone(),
                session_id: session_id.clone(),
                read: caps.fs.read_text_file,
                write: caps.fs.write_text_file,
            },
        );
        let sessions = Arc::downgrade(&self.sessions);
        let files = self.options.files.clone();
        let id = session_id.clone();
        let commands = session::spawn(
            session_id.clone(),
            client,
            self.peer.clone(),
            mapper,
            move || {
                files.unregister(&thread);
                if let Some(sessions) = sessions.upgrade() {
                    if let Ok(mut sessions) = sessions.lock() {
                        sessions.remove(&id);
                    }
                }
            },
        );
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(
                session_id.clone(),
                Arc::new(Session {
                    commands,
                    mode: Mutex::new(mode),
                }),
            );
        }
        session_id
    }
}

/// ACP's modes are Troupe's collaboration modes.
fn modes(current: CollaborationMode) -> Value {
    let id = match current {
        CollaborationMode::Plan => "plan",
        CollaborationMode::Default => "default",
    };
    json!({
        "currentModeId": id,
        "availableModes": [
            {"id": "default", "name": "Default", "description": "Do the work: edit files and run commands under the configured sandbox and approvals"},
            {"id": "plan", "name": "Plan", "description": "Investigate read-only and propose a plan; no changes"},
        ],
    })
}

/// The protocol version this server speaks.
pub fn protocol_version() -> u64 {
    PROTOCOL_VERSION
}
