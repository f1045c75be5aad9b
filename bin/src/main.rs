//! The `troupe` binary: parses the command line and hands off to a frontend.

mod app_server;
mod apply;
mod arg0;
mod debug;
mod doctor;
mod exec;
mod login;
mod mcp_cmd;
mod models;
mod output;
mod replay;
mod sandbox;
mod threads;
mod threads_tree;
mod trust;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Troupe: a local coding-agent runtime.
#[derive(Debug, Parser)]
#[command(name = "troupe", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one task non-interactively and print the final message.
    #[command(visible_alias = "e")]
    Exec(exec::ExecArgs),
    /// Run a command under the sandbox (debugging, tests).
    Sandbox(sandbox::SandboxArgs),
    /// List recorded threads, most recent first.
    List(threads::ListArgs),
    /// Start a new thread from a copy of another's history.
    Fork(threads::ForkArgs),
    /// Move a thread to `$TROUPE_HOME/archived_sessions/`.
    Archive(threads::IdArg),
    /// Move an archived thread back.
    Unarchive(threads::IdArg),
    /// Delete a thread's rollout and index entry.
    Delete(threads::DeleteArgs),
    /// Check Troupe's files; `--reindex` rebuilds the thread index.
    Doctor(doctor::DoctorArgs),
    /// Apply the last turn's file changes to the work tree with `git apply`.
    #[command(visible_alias = "a")]
    Apply(apply::ApplyArgs),
    /// Trust a project directory and pin its `.troupe` files (config, rules) by content.
    Trust(trust::TrustArgs),
    /// Serve Codex's app-server protocol (JSON-RPC) over stdio, a unix socket or WebSocket.
    AppServer(app_server::AppServerArgs),
    /// Store an API key (read from stdin with `--with-api-key`) in `$TROUPE_HOME/auth.json`.
    Login(login::LoginArgs),
    /// Remove the stored API keys.
    Logout,
    /// List the models a provider serves (`GET {base_url}/models`).
    Models(models::ModelsArgs),
    /// Manage the MCP servers of the user config (`[mcp_servers.<id>]`).
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
    /// Inspect what Troupe would do, without doing it.
    #[command(subcommand)]
    Debug(debug::DebugCommand),
}

fn main() -> ExitCode {
    // The sandbox helper personality: set up confinement and exec, before any thread exists.
    troupe_sandbox::helper::run_if_helper();
    if let Some(code) = arg0::dispatch() {
        return code;
    }
    init_tracing();
    let cli = Cli::parse();
    // Before the async runtime starts threads: this changes our environment.
    let _apply_patch_link = match home()
        .map_err(|e| e.to_string())
        .and_then(|h| arg0::install_path_link(&h))
    {
        Ok(dir) => Some(dir),
        Err(err) => {
            eprintln!("warning: commands will not find `apply_patch`: {err}");
            None
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Some(Command::Exec(args)) => runtime.block_on(exec::run(args)),
        Some(Command::AppServer(args)) => runtime.block_on(app_server::run(args)).map(ok),
        Some(Command::Sandbox(args)) => runtime.block_on(sandbox::run(args)),
        Some(Command::List(args)) => home().and_then(|h| threads::list(&h, args)).map(ok),
        Some(Command::Fork(args)) => home().and_then(|h| threads::fork(&h, args)).map(ok),
        Some(Command::Archive(args)) => home().and_then(|h| threads::archive(&h, args)).map(ok),
        Some(Command::Unarchive(args)) => home().and_then(|h| threads::unarchive(&h, args)).map(ok),
        Some(Command::Delete(args)) => home().and_then(|h| threads::delete(&h, args)).map(ok),
        Some(Command::Doctor(args)) => home().and_then(|h| doctor::run(&h, args)).map(|healthy| {
            if healthy {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }),
        Some(Command::Apply(args)) => apply::run(args),
        Some(Command::Trust(args)) => home().and_then(|h| trust::run(&h, args)).map(ok),
        Some(Command::Login(args)) => home().and_then(|h| login::login(&h, args)).map(ok),
        Some(Command::Logout) => home().and_then(|h| login::logout(&h)).map(ok),
        Some(Command::Models(args)) => home()
            .and_then(|h| runtime.block_on(models::run(&h, args)))
            .map(ok),
        Some(Command::Mcp(command)) => home().and_then(|h| mcp_cmd::run(&h, command)).map(ok),
        Some(Command::Debug(command)) => debug::run(command, &runtime).map(|()| ExitCode::SUCCESS),
        None => Err(anyhow::anyhow!(
            "the interactive terminal UI is not built yet; run a task with `troupe exec \"PROMPT\"`"
        )),
    };
    // Do not wait for background tasks (a stalled stream, a killed process) at exit.
    runtime.shutdown_background();
    match result {
        Ok(code) => code,
        Err(err) => output::failure_code(&err),
    }
}

fn home() -> anyhow::Result<std::path::PathBuf> {
    Ok(troupe_config::home::troupe_home()?)
}

fn ok(_: ()) -> ExitCode {
    ExitCode::SUCCESS
}

/// Logs go to stderr, off unless `RUST_LOG` asks for them.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
