//! `troupe exec`: one task, non-interactively. Flags follow Codex's `codex exec`, so scripts
//! written for it work unchanged.

mod human;
pub mod json_events;
mod resume;

use anyhow::{bail, Context, Result};
use clap::Args;
use human::HumanOutput;
use json_events::JsonEvents;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use troupe_actors::runtime::Runtime;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::policy::SandboxMode;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Print events as JSON lines on stdout.
    #[arg(long = "json", alias = "experimental-json")]
    json: bool,
    /// Model to use.
    #[arg(short = 'm', long = "model")]
    model: Option<String>,
    /// Override a config value: `-c key=value` (value parsed as TOML, else a string).
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
    /// Use the named `[profiles.<name>]` of config.toml.
    #[arg(short = 'p', long = "profile")]
    profile: Option<String>,
    /// Run as if started in DIR.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,
    /// Sandbox mode for commands.
    #[arg(short = 's', long = "sandbox", value_enum)]
    sandbox: Option<SandboxArg>,
    /// Run outside a Git repository.
    #[arg(long = "skip-git-repo-check")]
    skip_git_repo_check: bool,
    /// Write the last agent message to FILE.
    #[arg(short = 'o', long = "output-last-message", value_name = "FILE")]
    output_last_message: Option<PathBuf>,
    /// Shortcut for workspace-write sandbox without approval prompts.
    #[arg(long = "full-auto")]
    full_auto: bool,
    /// Run commands without sandbox or approvals. Dangerous.
    #[arg(long = "dangerously-bypass-approvals-and-sandbox", alias = "yolo")]
    yolo: bool,
    /// The task; `-` or absent reads it from stdin.
    prompt: Option<String>,
    #[command(subcommand)]
    command: Option<ExecCommand>,
}

#[derive(Debug, clap::Subcommand)]
enum ExecCommand {
    /// Continue a recorded thread with a new prompt.
    Resume(resume::ResumeArgs),
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SandboxArg {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

impl From<SandboxArg> for SandboxMode {
    fn from(arg: SandboxArg) -> Self {
        match arg {
            SandboxArg::ReadOnly => SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxArg::DangerFullAccess => SandboxMode::DangerFullAccess,
        }
    }
}

/// Runs the task; the exit code says whether the turn completed.
pub async fn run(mut args: ExecArgs) -> Result<ExitCode> {
    let home = troupe_config::home::troupe_home()?;
    let store = crate::threads::open_store(&home, crate::threads::Reconcile::Skip);
    let (target, prompt) = match args.command.take() {
        Some(ExecCommand::Resume(resume)) => {
            let (target, prompt) = resume::pick(&home, store.as_deref(), resume)?;
            (Some(target), prompt)
        }
        None => (None, args.prompt.clone()),
    };
    let prompt = read_prompt(prompt.as_deref())?;
    let cwd = match (&args.cd, &target) {
        (Some(dir), _) => std::fs::canonicalize(dir)
            .with_context(|| format!("--cd {}: not a usable directory", dir.display()))?,
        (None, Some(target)) => PathBuf::from(&target.cwd),
        (None, None) => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !args.skip_git_repo_check && !inside_git_repo(&cwd) {
        bail!(
            "{} is not inside a Git repository; pass --skip-git-repo-check to run here anyway",
            cwd.display()
        );
    }
    let sandbox_mode = if args.yolo {
        Some(SandboxMode::DangerFullAccess)
    } else if args.full_auto {
        Some(SandboxMode::WorkspaceWrite)
    } else {
        args.sandbox.map(SandboxMode::from)
    };
    let loaded = load_config(
        &home,
        &CliOverrides {
            raw: args.config.clone(),
            model: args.model.clone(),
            sandbox_mode,
            approval_policy: None,
            cwd: Some(cwd),
            profile: args.profile.clone(),
        },
    )?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    let settings = loaded.settings;
    if let Some(env_key) = &settings.provider.env_key {
        if std::env::var(env_key).map(|v| v.is_empty()).unwrap_or(true) {
            bail!(
                "missing API key: set the environment variable {env_key} (model provider `{}`)",
                settings.provider.id
            );
        }
    }

    let mut human = HumanOutput::new(!args.json);
    if settings.sandbox_mode != SandboxMode::DangerFullAccess {
        human.warn(&format!(
            "sandbox mode `{}` is not enforced by this build yet: commands run unconfined",
            settings.sandbox_mode.as_str()
        ));
    }
    let runtime = Runtime::start_with_store(ToolRegistry::with_builtin_tools(), store).await?;
    let mut thread = match &target {
        Some(target) => {
            runtime
                .resume_thread(settings, PathBuf::from(&target.rollout_path))
                .await?
        }
        None => runtime.start_thread(settings).await?,
    };
    thread.submit(Op::UserInput {
        items: vec![UserInput::Text {
            text: prompt.clone(),
        }],
    })?;

    let mut json = JsonEvents::default();
    let mut stdout = std::io::stdout().lock();
    let mut last_message: Option<String> = None;
    let mut succeeded = false;
    let mut prompt_shown = false;
    while let Some(event) = thread.next_event().await {
        if args.json {
            for line in json.convert(&event.msg) {
                writeln!(stdout, "{line}")?;
            }
            stdout.flush()?;
        } else {
            human.render(&event.msg);
            if !prompt_shown {
                human.user(&prompt);
                prompt_shown = true;
            }
        }
        match event.msg {
            EventMsg::TurnComplete {
                last_agent_message, ..
            } => {
                last_message = last_agent_message;
                succeeded = true;
                break;
            }
            EventMsg::TurnAborted { .. } => break,
            _ => {}
        }
    }
    // Wait for the session to shut down: its rollout is flushed and its lock released.
    if thread.submit(Op::Shutdown).is_ok() {
        let drained = async { while thread.next_event().await.is_some() {} };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), drained).await;
    }
    runtime.stop();

    if let Some(path) = &args.output_last_message {
        std::fs::write(path, last_message.as_deref().unwrap_or(""))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !args.json {
        if let Some(message) = &last_message {
            writeln!(stdout, "{message}")?;
        }
    }
    Ok(if succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The prompt from the argument, or from stdin when absent or `-`.
fn read_prompt(arg: Option<&str>) -> Result<String> {
    let prompt = match arg {
        Some(text) if text != "-" => text.to_string(),
        _ => {
            let mut stdin = std::io::stdin();
            if arg.is_none() && stdin.is_terminal() {
                bail!("no prompt given: pass it as an argument or pipe it on stdin");
            }
            let mut text = String::new();
            stdin
                .read_to_string(&mut text)
                .context("cannot read the prompt from stdin")?;
            text
        }
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    Ok(prompt)
}

fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}
