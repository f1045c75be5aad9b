//! The `troupe` binary: parses the command line and hands off to a frontend.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

mod acp;
mod app_server;
mod apply;
mod arg0;
mod completion;
mod debug;
mod doctor;
mod mcp_cmd;
mod mcp_login;
mod queue;
mod replay;
mod rewind;
mod sandbox;
mod tui;
mod web;

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use troupe_cli::{features, login, models, output, threads, trust};

/// Troupe: a local coding-agent runtime.
#[derive(Debug, Parser)]
#[command(name = "troupe", version, about)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a subcommand: the interactive UI.
    #[command(flatten)]
    interactive: tui::TuiArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one task non-interactively and print the final message.
    #[command(visible_alias = "e")]
    Exec(Box<troupe_exec::ExecArgs>),
    /// Run a command under the sandbox (debugging, tests).
    Sandbox(sandbox::SandboxArgs),
    /// List recorded threads, most recent first.
    List(threads::ListArgs),
    /// Continue a recorded thread in the interactive UI.
    Resume(tui::ResumeCommand),
    /// Start a new thread from a copy of another's history: opens it in the interactive UI
    /// (prints the new id instead when not run in a terminal).
    Fork(tui::ForkCommand),
    /// Move a thread to `$TROUPE_HOME/archived_sessions/`.
    Archive(threads::IdArg),
    /// Move an archived thread back.
    Unarchive(threads::IdArg),
    /// Delete a thread's rollout and index entry.
    Delete(threads::DeleteArgs),
    /// Take a thread's work tree and conversation back to before a turn (or `--undo`).
    Rewind(rewind::RewindArgs),
    /// Check Troupe's files; `--reindex` rebuilds the thread index.
    Doctor(doctor::DoctorArgs),
    /// Apply the last turn's file changes to the work tree with `git apply`.
    #[command(visible_alias = "a")]
    Apply(apply::ApplyArgs),
    /// Trust a project directory and pin its `.troupe` files (config, rules) by content.
    Trust(trust::TrustArgs),
    /// Serve Codex's app-server protocol (JSON-RPC) over stdio, a unix socket or WebSocket.
    AppServer(app_server::AppServerArgs),
    /// Serve the supervisor web page on a free loopback port and print its URL (with a token).
    Web(web::WebArgs),
    /// Store an API key (read from stdin with `--with-api-key`) in `$TROUPE_HOME/auth.json`.
    Login(login::LoginArgs),
    /// Remove the stored API keys.
    Logout,
    /// List the models a provider serves (`GET {base_url}/models`).
    Models(models::ModelsArgs),
    /// Manage the MCP servers of the user config (`[mcp_servers.<id>]`).
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
    /// Serve Troupe as an MCP server over stdio (tools `troupe` and `troupe-reply`).
    McpServer(troupe_mcp_server::McpServerArgs),
    /// Serve the Agent Client Protocol over stdio, for editors (Zed, JetBrains, Neovim, …).
    Acp(acp::AcpArgs),
    /// Inspect what Troupe would do, without doing it.
    #[command(subcommand)]
    Debug(debug::DebugCommand),
    /// Write a shell completion script (bash, zsh, fish, powershell, elvish) to stdout.
    Completion(completion::CompletionArgs),
    /// Inspect feature flags: `troupe features list`.
    #[command(subcommand)]
    Features(features::FeaturesCommand),
    /// Review code changes non-interactively: the uncommitted changes (default), `--base
    /// BRANCH` or `--commit SHA`; `--json` prints the structured review.
    Review(Box<troupe_exec::review::ReviewCommand>),
    /// Queue a message for a thread: the process running it takes it at its next sampling
    /// boundary, or the thread takes it when resumed (`--resume`: resume it now).
    Queue(queue::QueueArgs),
    /// Join a scale-out worker pool: run threads that `exec --remote` (or another troupe)
    /// places on it, over NATS JetStream.
    Worker(troupe_worker::WorkerArgs),
}

/// Troupe's own files (rollouts, queue files, the index, tokens) are created 0600 and its
/// directories 0700, whatever the mode of the home they are in: the process runs with the
/// mask 077, and what it starts for the user (commands, hooks, MCP servers, the notify
/// program) and writes into the work tree (`apply_patch`) gets the user's mask back
/// (`troupe_messages::file_mask`). `apply` and `sandbox` write only for the user: they keep
/// the user's mask. Before any thread exists, as the mask is the process's.
fn private_file_mask(cli: &Cli) {
    if matches!(
        cli.command,
        Some(Command::Apply(_)) | Some(Command::Sandbox(_))
    ) {
        return;
    }
    // SAFETY: a plain syscall.
    let user = unsafe { libc::umask(0o077) };
    troupe_messages::file_mask::set_user_mask(user as u32);
}

fn main() -> ExitCode {
    // The sandbox helper personality: set up confinement and exec, before any thread exists.
    troupe_sandbox::helper::run_if_helper();
    // The rules evaluator personality: one rules file, under kernel limits, in a child.
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(std::ffi::OsStr::new(troupe_rules::confined::CHILD_ARG)) {
        let name = args.next().unwrap_or_default();
        let code = troupe_rules::confined::child_main(&name.to_string_lossy());
        return ExitCode::from(u8::try_from(code).unwrap_or(3));
    }
    // Exec'd in the forked child, `/proc/self/exe` is this binary even if its file was
    // replaced or removed since.
    troupe_rules::confined::evaluate_in_children(std::path::PathBuf::from("/proc/self/exe"));
    if let Some(code) = arg0::dispatch() {
        return code;
    }
    init_tracing();
    let cli = parse_cli();
    private_file_mask(&cli);
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
        Some(Command::Exec(args)) => runtime.block_on(troupe_exec::run(*args)),
        Some(Command::AppServer(args)) => runtime.block_on(app_server::run(args)),
        Some(Command::Web(args)) => runtime.block_on(web::run(args)),
        Some(Command::Sandbox(args)) => runtime.block_on(sandbox::run(args)),
        Some(Command::List(args)) => home().and_then(|h| threads::list(&h, args)).map(ok),
        Some(Command::Resume(args)) => runtime.block_on(tui::resume(args)),
        Some(Command::Fork(args)) => runtime.block_on(tui::fork(args)),
        Some(Command::Archive(args)) => home().and_then(|h| threads::archive(&h, args)).map(ok),
        Some(Command::Unarchive(args)) => home().and_then(|h| threads::unarchive(&h, args)).map(ok),
        Some(Command::Delete(args)) => home().and_then(|h| threads::delete(&h, args)).map(ok),
        Some(Command::Rewind(args)) => home().and_then(|h| rewind::run(&h, args)).map(ok),
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
        Some(Command::Mcp(command)) => home()
            .and_then(|h| runtime.block_on(mcp_cmd::run(&h, command)))
            .map(ok),
        Some(Command::McpServer(args)) => runtime.block_on(troupe_mcp_server::run(args)),
        Some(Command::Acp(args)) => runtime.block_on(acp::run(args)),
        Some(Command::Debug(command)) => debug::run(command, &runtime).map(|()| ExitCode::SUCCESS),
        Some(Command::Completion(args)) => completion::run(args).map(ok),
        Some(Command::Features(command)) => home().and_then(|h| features::run(&h, command)).map(ok),
        Some(Command::Review(args)) => {
            runtime.block_on(troupe_exec::run(troupe_exec::ExecArgs::for_review(*args)))
        }
        Some(Command::Queue(args)) => home().and_then(|h| runtime.block_on(queue::run(&h, args))),
        Some(Command::Worker(args)) => runtime.block_on(troupe_worker::run(args)),
        None => runtime.block_on(tui::run(cli.interactive)),
    };
    // Do not wait for background tasks (a stalled stream, a killed process) at exit.
    runtime.shutdown_background();
    match result {
        Ok(code) => code,
        Err(err) => output::failure_code(&err),
    }
}

/// `--cd` is global inside `exec` (`exec resume --last --cd DIR`) but not at the top, where
/// it would leak into every other subcommand.
fn parse_cli() -> Cli {
    use clap::FromArgMatches;
    let matches = cli_command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit())
}

fn cli_command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command().mut_subcommand("exec", |exec| exec.mut_arg("cd", |cd| cd.global(true)))
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

#[cfg(test)]
mod cli_tests {
    /// Every subcommand's flags are consistent (clap checks names and shorts only when a
    /// subcommand is used; a clash there would panic at run time).
    #[test]
    fn the_command_line_is_well_formed() {
        super::cli_command().debug_assert();
    }
}
