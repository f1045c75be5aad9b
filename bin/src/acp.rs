//! `troupe acp`: the Agent Client Protocol over stdio, for editors.

use anyhow::{Context, Result};
use clap::Args;
use std::process::ExitCode;
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_cli::signals::{serve_until_stopped, StopSignals};

#[derive(Debug, Args)]
pub struct AcpArgs {
    /// Override a config value for every session: `-c key=value` (value parsed as TOML).
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
}

/// Serves the editor on stdin/stdout until stdin closes or a stop signal comes; every running
/// turn's end is recorded either way (see `signals.rs`).
pub async fn run(args: AcpArgs) -> Result<ExitCode> {
    let home = troupe_config::home::troupe_home()?;
    // A broken config.toml is an error now, not at the first session.
    troupe_config::resolve::load_config(
        &home,
        &troupe_config::resolve::CliOverrides {
            raw: args.config.clone(),
            ..Default::default()
        },
    )?;
    let mut signals = StopSignals::install().context("cannot catch SIGINT/SIGTERM/SIGHUP")?;
    let files = troupe_acp::files::EditorBridge::new();
    let registry = ToolRegistry::with_builtin_tools().with_editor_files(files.clone());
    // No thread index: sled's buffers and threads were two thirds of this server's memory, and
    // an editor keeps it running all day. Sessions are found, and their agents re-attached,
    // from the rollout files; the next command that opens the index catches it up.
    let runtime = Runtime::start(registry).await?;
    let options = troupe_acp::AcpOptions {
        home,
        overrides: args.config,
        files,
    };
    let handle = runtime.clone();
    let serving = async move {
        troupe_acp::serve(runtime, options, tokio::io::stdin(), tokio::io::stdout()).await?;
        Ok(())
    };
    serve_until_stopped(&handle, &mut signals, serving).await
}
