//! `troupe debug …`: look inside without running anything.

use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use troupe_actors::sampler::wire::wire_for;
use troupe_actors::session::context::initial_context;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_actors::turn::prompt::{build_request, for_mode, user_message};
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::ids::ThreadId;
use troupe_messages::ops::UserInput;

#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Print the request body the first turn of a new thread would send for PROMPT, in the
    /// provider's wire format.
    PromptInput(PromptInputArgs),
    /// Re-run a recorded thread against the built-in `replay` provider (model outputs from
    /// the rollout, tools for real); `--check` fails on the first difference.
    Replay(crate::replay::ReplayArgs),
}

#[derive(Debug, Args)]
pub struct PromptInputArgs {
    /// Override a config value: `-c key=value`.
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
    /// Model to use.
    #[arg(short = 'm', long = "model")]
    model: Option<String>,
    /// Use the named `[profiles.<name>]`.
    #[arg(short = 'p', long = "profile")]
    profile: Option<String>,
    /// Work in DIR.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,
    /// The user message; without it, the input ends with the initial context.
    prompt: Option<String>,
}

pub fn run(command: DebugCommand, runtime: &tokio::runtime::Runtime) -> Result<()> {
    match command {
        DebugCommand::PromptInput(args) => prompt_input(args),
        DebugCommand::Replay(args) => runtime.block_on(crate::replay::run(args)),
    }
}

fn prompt_input(args: PromptInputArgs) -> Result<()> {
    let cwd = match &args.cd {
        Some(dir) => std::fs::canonicalize(dir)?,
        None => std::env::current_dir()?,
    };
    let home = troupe_config::home::troupe_home()?;
    let loaded = load_config(
        &home,
        &CliOverrides {
            raw: args.config,
            model: args.model,
            cwd: Some(cwd),
            profile: args.profile,
            ..CliOverrides::default()
        },
    )?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    let context = initial_context(&loaded.settings);
    for warning in &context.warnings {
        eprintln!("warning: {warning}");
    }
    let mut history = context.items;
    if let Some(prompt) = args.prompt {
        history.push(user_message(&[UserInput::Text { text: prompt }]));
    }
    // The runtime's registry: the built-in tools plus the collaboration tools the thread
    // manager adds, sorted by name as the registry keeps them.
    let mut tools = ToolRegistry::with_builtin_tools().specs_for(&loaded.settings);
    tools.extend(troupe_actors::agents::tools::offered_specs(
        &loaded.settings,
    ));
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    let (settings, tools) = for_mode(&loaded.settings, tools);
    let request = build_request(ThreadId::new(), &settings, &history, tools);
    troupe_cli::output::line(serde_json::to_string_pretty(
        &wire_for(settings.provider.wire_api).body(&request),
    )?)?;
    Ok(())
}
