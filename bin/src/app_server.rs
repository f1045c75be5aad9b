//! `troupe app-server`: Codex's app-server wire over stdio, a unix socket or WebSocket.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_app_server::{Listen, ServeOptions};
use troupe_cli::signals::{serve_until_stopped, StopSignals};

#[derive(Debug, Args)]
pub struct AppServerArgs {
    /// Where to listen: stdio:// (default), unix://PATH or ws://IP:PORT.
    #[arg(long, default_value = "stdio://", value_name = "URL")]
    listen: String,
    /// Same as `--listen stdio://`.
    #[arg(long, conflicts_with = "listen")]
    stdio: bool,
    /// Override a config value for every thread: `-c key=value` (value parsed as TOML).
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
    /// File holding the WebSocket capability token (clients send `Authorization: Bearer TOKEN`).
    /// Without it a loopback ws:// gets a fresh token, written to
    /// `$TROUPE_HOME/app-server/ws-PORT.token` (0600) and shown on stderr.
    #[arg(long, value_name = "FILE")]
    ws_token_file: Option<PathBuf>,
    /// Accept WebSocket clients without a token (loopback only): then any local process of
    /// any user can start threads, with any sandbox, as you.
    #[arg(long, conflicts_with_all = ["ws_token_file", "web"])]
    ws_insecure_no_token: bool,
    /// A browser origin allowed to open the WebSocket (repeatable); other origins are refused.
    #[arg(long = "ws-allowed-origin", value_name = "ORIGIN")]
    ws_allowed_origins: Vec<String>,
    /// Unload threads idle for longer than SECS (history stays on disk; they reload on use).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    idle_unload_secs: u64,
    /// Also serve the supervisor web page on the WebSocket's port (needs ws://); its URL, with
    /// the token in the fragment, is printed on stdout (a fresh token without --ws-token-file).
    #[arg(long)]
    web: bool,
    #[command(subcommand)]
    command: Option<AppServerCommand>,
}

#[derive(Debug, clap::Subcommand)]
enum AppServerCommand {
    /// Write the JSON schema of Troupe's wire (generated from its Rust types) to DIR.
    GenerateJsonSchema {
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

pub async fn run(args: AppServerArgs) -> Result<ExitCode> {
    if let Some(AppServerCommand::GenerateJsonSchema { out }) = args.command {
        std::fs::create_dir_all(&out)
            .with_context(|| format!("cannot create {}", out.display()))?;
        let path = out.join("troupe_app_server.schemas.json");
        let document = troupe_app_server_protocol::schema::wire_schema_document();
        std::fs::write(&path, serde_json::to_vec_pretty(&document)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("{}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let listen: Listen = if args.stdio {
        Listen::Stdio
    } else {
        args.listen.parse().map_err(anyhow::Error::msg)?
    };
    // A loopback port is reachable by every local process of every user: it gets a token
    // unless the user opted out by name. A non-loopback one needs the user's own token file
    // (refused at start otherwise).
    let loopback_ws = matches!(&listen, Listen::Ws(addr) if addr.ip().is_loopback());
    let (ws_token, token_file) = match &args.ws_token_file {
        Some(path) => (Some(read_token(path)?), TokenFile::None),
        // The page needs a token; a fresh one reaches the user only in the printed URL.
        None if args.web => (Some(fresh_token()?), TokenFile::None),
        None if loopback_ws && !args.ws_insecure_no_token => {
            (Some(fresh_token()?), TokenFile::Write)
        }
        None => (None, TokenFile::None),
    };
    if args.ws_insecure_no_token && loopback_ws {
        troupe_cli::output::warn(
            "--ws-insecure-no-token: any local process of any user can connect and start              threads as you",
        );
    }
    serve(Served {
        listen,
        config: args.config,
        ws_token,
        token_file,
        allowed_origins: args.ws_allowed_origins,
        idle_unload_secs: args.idle_unload_secs,
        web: args.web,
    })
    .await
}

pub use troupe_app_server::TokenFile;

fn read_token(path: &std::path::Path) -> Result<String> {
    let token = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = token.trim().to_string();
    if token.len() < 16 {
        bail!(
            "the token in {} is shorter than 16 characters",
            path.display()
        );
    }
    Ok(token)
}

/// 32 random bytes from the kernel, as hex.
pub fn fresh_token() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for a capability token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What `troupe app-server` and `troupe web` both start.
pub struct Served {
    pub listen: Listen,
    pub config: Vec<String>,
    pub ws_token: Option<String>,
    /// Whether a generated token is written to the home and shown on stderr.
    pub token_file: TokenFile,
    pub allowed_origins: Vec<String>,
    pub idle_unload_secs: u64,
    pub web: bool,
}

/// Serves until the client goes away (stdio) or a stop signal comes; every running turn's end
/// is recorded either way (see `signals.rs`).
pub async fn serve(args: Served) -> Result<ExitCode> {
    let home = troupe_config::home::troupe_home()?;
    // Check the config once at start: a broken config.toml is an error now, not per thread.
    troupe_config::resolve::load_config(
        &home,
        &troupe_config::resolve::CliOverrides {
            raw: args.config.clone(),
            ..Default::default()
        },
    )?;
    let store = troupe_cli::threads::open_store(&home, troupe_cli::threads::Reconcile::Run);
    let mut signals = StopSignals::install().context("cannot catch SIGINT/SIGTERM/SIGHUP")?;
    let runtime =
        Runtime::start_with_store(ToolRegistry::with_builtin_tools(), store.clone()).await?;
    let options = ServeOptions {
        listen: args.listen,
        home,
        overrides: args.config,
        ws_token: args.ws_token,
        token_file: args.token_file,
        allowed_origins: args.allowed_origins,
        web: args.web,
        // 0 keeps every thread loaded.
        idle_unload: (args.idle_unload_secs > 0)
            .then(|| std::time::Duration::from_secs(args.idle_unload_secs)),
    };
    let handle = runtime.clone();
    let serving = async move {
        troupe_app_server::serve(options, runtime, store).await?;
        Ok(())
    };
    serve_until_stopped(&handle, &mut signals, serving).await
}
