//! `troupe mcp-server`: Troupe as an MCP server over stdio (rmcp's server side). Tools
//! `troupe` (start a thread with a prompt and settings) and `troupe-reply` (continue one)
//! return the turn's final message; see `turn.rs` for events and approvals. Every thread
//! lives in this process's runtime until the client disconnects.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

mod notify;
pub mod params;
pub mod transport;
mod turn;

use anyhow::{Context, Result};
use clap::Args;
use notify::{LogLevel, Notifier};
use params::{ReplyParams, StartParams, REPLY_TOOL, START_TOOL};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use transport::FilteredStdio;
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_cli::signals::{serve_until_stopped, StopSignals};
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, Content, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerInfo, SetLevelRequestParams,
};
use troupe_mcp::rmcp::service::{RequestContext, RoleServer};
use troupe_mcp::rmcp::{ServerHandler, ServiceExt};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::SessionSettings;

#[derive(Debug, Args)]
pub struct McpServerArgs {
    /// Override a config value for every thread: `-c key=value` (value parsed as TOML).
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
}

/// A thread of this server, one turn at a time.
type SharedThread = Arc<tokio::sync::Mutex<ThreadClient>>;

#[derive(Clone)]
struct TroupeServer {
    runtime: Arc<Runtime>,
    home: PathBuf,
    overrides: Vec<String>,
    threads: Arc<Mutex<HashMap<String, SharedThread>>>,
    level: LogLevel,
}

/// Serves MCP on stdin/stdout until the client closes the connection or a stop signal comes;
/// either way each running turn's end is recorded (see `signals.rs`).
pub async fn run(args: McpServerArgs) -> Result<ExitCode> {
    let home = troupe_config::home::troupe_home()?;
    // A bad `-c` fails now, before a client is told anything.
    load_settings(&home, &args.config, &StartParams::default()).context("invalid config")?;
    let store = troupe_cli::threads::open_store(&home, troupe_cli::threads::Reconcile::Skip);
    let mut signals = StopSignals::install().context("cannot catch SIGINT/SIGTERM/SIGHUP")?;
    let runtime =
        Arc::new(Runtime::start_with_store(ToolRegistry::with_builtin_tools(), store).await?);
    let server = TroupeServer {
        runtime: runtime.clone(),
        home,
        overrides: args.config,
        threads: Arc::default(),
        level: LogLevel::default(),
    };
    let serving = async move {
        let service = server
            .serve(FilteredStdio::new(tokio::io::stdin(), tokio::io::stdout()))
            .await
            .context("MCP handshake on stdin/stdout failed")?;
        let _ = service.waiting().await;
        Ok(())
    };
    serve_until_stopped(&runtime, &mut signals, serving).await
}

/// The settings of a new thread: the config, the server's `-c`, then the call's arguments.
fn load_settings(home: &Path, overrides: &[String], call: &StartParams) -> Result<SessionSettings> {
    let mut raw = overrides.to_vec();
    raw.extend(call.config_overrides().map_err(anyhow::Error::msg)?);
    let cwd = match &call.cwd {
        Some(dir) => {
            let path = std::env::current_dir()
                .context("cannot read the current directory")?
                .join(dir);
            let path = std::fs::canonicalize(&path)
                .with_context(|| format!("cwd `{dir}`: not a usable directory"))?;
            if !path.is_dir() {
                anyhow::bail!("cwd `{dir}`: not a directory");
            }
            path
        }
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let loaded = load_config(
        home,
        &CliOverrides {
            raw,
            model: call.model.clone(),
            sandbox_mode: call.sandbox.map(|s| match s {
                params::SandboxParam::ReadOnly => SandboxMode::ReadOnly,
                params::SandboxParam::WorkspaceWrite => SandboxMode::WorkspaceWrite,
                params::SandboxParam::DangerFullAccess => SandboxMode::DangerFullAccess,
            }),
            approval_policy: call.approval_policy.map(|a| match a {
                params::ApprovalParam::Untrusted => AskForApproval::UnlessTrusted,
                params::ApprovalParam::OnFailure => AskForApproval::OnFailure,
                params::ApprovalParam::OnRequest => AskForApproval::OnRequest,
                params::ApprovalParam::Never => AskForApproval::Never,
            }),
            cwd: Some(cwd),
            profile: call.profile.clone(),
            strict_config: false,
            ignore_user_config: false,
        },
    )?;
    let settings = loaded.settings;
    troupe_actors::sampler::auth::api_key(
        &settings.provider,
        &home.join(troupe_actors::sampler::auth::AUTH_FILE),
    )?;
    Ok(settings)
}

/// A result the calling model reads as an error.
fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![Content::text(text)])
}

impl TroupeServer {
    async fn start(&self, call: StartParams, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let home = self.home.clone();
        let overrides = self.overrides.clone();
        // Reading config files is blocking work.
        let loaded = tokio::task::spawn_blocking(move || {
            let settings = load_settings(&home, &overrides, &call);
            (settings, call.prompt)
        })
        .await;
        let (settings, prompt) = match loaded {
            Ok((Ok(settings), prompt)) => (settings, prompt),
            Ok((Err(err), _)) => return error_result(format!("cannot start a thread: {err:#}")),
            Err(err) => return error_result(format!("cannot start a thread: {err}")),
        };
        let client = match self.runtime.start_thread(settings).await {
            Ok(client) => client,
            Err(err) => return error_result(format!("cannot start a thread: {err}")),
        };
        let thread_id = client.handle.thread_id.to_string();
        let thread = Arc::new(tokio::sync::Mutex::new(client));
        self.threads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(thread_id, thread.clone());
        let mut client = thread.lock().await;
        self.turn(&mut client, prompt, ctx).await
    }

    async fn reply(&self, call: ReplyParams, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let id = match call.thread() {
            Ok(id) => id.to_string(),
            Err(err) => return error_result(err),
        };
        let thread = self
            .threads
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&id)
            .cloned();
        let Some(thread) = thread else {
            return error_result(format!(
                "no thread `{}` in this server: `troupe-reply` continues threads started by \
                 `troupe` since the server started",
                id.escape_debug()
            ));
        };
        let Ok(mut client) = thread.try_lock() else {
            return error_result(format!(
                "thread `{id}` is running a turn; call `troupe-reply` again once it has answered"
            ));
        };
        self.turn(&mut client, call.prompt, ctx).await
    }

    async fn turn(
        &self,
        client: &mut ThreadClient,
        prompt: String,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let mut notifier = Notifier::new(self.level.clone(), ctx.meta.get_progress_token());
        turn::run_turn(client, prompt, &ctx.peer, &mut notifier, ctx.ct.clone()).await
    }
}

impl ServerHandler for TroupeServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo {
            // Elicitation (how approvals are asked) came with this revision.
            protocol_version: ProtocolVersion::V_2025_06_18,
            capabilities: ServerCapabilities::builder()
                .enable_logging()
                .enable_tools()
                .build(),
            server_info: Implementation {
                name: "troupe-mcp-server".into(),
                title: Some("Troupe".into()),
                version: env!("CARGO_PKG_VERSION").into(),
                icons: None,
                website_url: None,
            },
            instructions: None,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: vec![params::start_tool(), params::reply_tool()],
            next_cursor: None,
            meta: None,
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = request.name.as_ref();
        Ok(match name {
            START_TOOL => match params::parse::<StartParams>(name, request.arguments) {
                Ok(call) => self.start(call, ctx).await,
                Err(err) => error_result(err),
            },
            REPLY_TOOL => match params::parse::<ReplyParams>(name, request.arguments) {
                Ok(call) => self.reply(call, ctx).await,
                Err(err) => error_result(err),
            },
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool `{}`: this server has `{START_TOOL}` and `{REPLY_TOOL}`",
                        other.escape_debug()
                    ),
                    None,
                ))
            }
        })
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.set(request.level);
        Ok(())
    }
}
