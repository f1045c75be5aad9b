//! `troupe exec`: one task, non-interactively. Flags follow Codex's `codex exec`, so scripts
//! written for it work unchanged.

mod human;
pub mod json_events;
mod render;
mod resume;
mod signals;
pub mod thread_event;

use crate::output::warn;
use crate::output::StdoutError;
use anyhow::{bail, Context, Result};
use clap::Args;
use human::HumanOutput;
use json_events::JsonOutput;
use render::EventRenderer;
use signals::{StopSignal, StopSignals};
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::events::EventMsg;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::policy::{AskForApproval, SandboxMode};

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
    /// Run as if started in DIR (also after `resume`: `--last` picks DIR's thread).
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    cd: Option<PathBuf>,
    /// Sandbox mode for commands.
    #[arg(short = 's', long = "sandbox", value_enum)]
    sandbox: Option<SandboxArg>,
    /// When to ask before running a command. `exec` cannot ask: a request is denied.
    #[arg(short = 'a', long = "ask-for-approval", value_enum)]
    ask_for_approval: Option<ApprovalArg>,
    /// Run outside a Git repository.
    #[arg(long = "skip-git-repo-check")]
    skip_git_repo_check: bool,
    /// Write the last agent message to FILE.
    #[arg(short = 'o', long = "output-last-message", value_name = "FILE")]
    output_last_message: Option<PathBuf>,
    /// Shortcut for `-s workspace-write -a never`.
    #[arg(long = "full-auto")]
    full_auto: bool,
    /// Run commands without sandbox or approvals. Dangerous.
    #[arg(long = "dangerously-bypass-approvals-and-sandbox", alias = "yolo")]
    yolo: bool,
    /// Use a local model server (built-in provider `oss`: Chat Completions on
    /// 127.0.0.1:11434, no key); checks that it answers first.
    #[arg(long = "oss")]
    oss: bool,
    /// Which local server `--oss` talks to (picks its default port); implies `--oss`.
    #[arg(long = "local-provider", value_enum)]
    local_provider: Option<LocalProviderArg>,
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

/// The local servers `--local-provider` knows (built-in providers of the same ids).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LocalProviderArg {
    Ollama,
    Lmstudio,
    Vllm,
    Llamacpp,
}

impl LocalProviderArg {
    fn provider_id(self) -> &'static str {
        match self {
            LocalProviderArg::Ollama => "ollama",
            LocalProviderArg::Lmstudio => "lmstudio",
            LocalProviderArg::Vllm => "vllm",
            LocalProviderArg::Llamacpp => "llamacpp",
        }
    }
}

/// The model `--oss` uses when `-m` names none (as Codex's `--oss`).
const DEFAULT_OSS_MODEL: &str = "gpt-oss:20b";

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ApprovalArg {
    Untrusted,
    OnRequest,
    OnFailure,
    Never,
}

impl From<ApprovalArg> for AskForApproval {
    fn from(arg: ApprovalArg) -> Self {
        match arg {
            ApprovalArg::Untrusted => AskForApproval::UnlessTrusted,
            ApprovalArg::OnRequest => AskForApproval::OnRequest,
            ApprovalArg::OnFailure => AskForApproval::OnFailure,
            ApprovalArg::Never => AskForApproval::Never,
        }
    }
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
    let cd = args.cd.as_deref().map(usable_dir).transpose()?;
    let (target, prompt) = match args.command.take() {
        Some(ExecCommand::Resume(resume)) => {
            let (target, prompt) = resume::pick(&home, store.as_deref(), resume, cd.as_deref())?;
            (Some(target), prompt)
        }
        None => (None, args.prompt.clone()),
    };
    let prompt = read_prompt(prompt.as_deref())?;
    let cwd = match (cd, &target) {
        (Some(dir), _) => dir,
        (None, Some(target)) => target.cwd.clone(),
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
    // The full-auto flags mean "do not stop to ask": exec has nobody to ask anyway.
    let approval_policy = if args.yolo || args.full_auto {
        Some(AskForApproval::Never)
    } else {
        args.ask_for_approval.map(AskForApproval::from)
    };
    let local = args.oss || args.local_provider.is_some();
    let mut raw = args.config.clone();
    let mut model = args.model.clone();
    if local {
        let id = args
            .local_provider
            .map_or("oss", LocalProviderArg::provider_id);
        raw.push(format!("model_provider={}", crate::login::toml_string(id)));
        model.get_or_insert_with(|| DEFAULT_OSS_MODEL.to_string());
    }
    let loaded = load_config(
        &home,
        &CliOverrides {
            raw,
            model,
            sandbox_mode,
            approval_policy,
            cwd: Some(cwd),
            profile: args.profile.clone(),
        },
    )?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    let settings = loaded.settings;
    if local {
        crate::models::check_local_server(&home, &settings.provider, &settings.model).await?;
    }
    // Checked before the thread starts (the sampler reads the key again at each request).
    troupe_actors::sampler::auth::api_key(
        &settings.provider,
        &home.join(troupe_actors::sampler::auth::AUTH_FILE),
    )?;

    // From here on a signal interrupts the turn instead of killing troupe on the spot.
    let mut signals = StopSignals::install().context("cannot catch SIGINT/SIGTERM/SIGHUP")?;
    let runtime = Runtime::start_with_store(ToolRegistry::with_builtin_tools(), store).await?;
    let mut thread = match &target {
        Some(target) => {
            runtime
                .resume_thread(settings, target.rollout_path.clone())
                .await?
        }
        None => runtime.start_thread(settings).await?,
    };
    thread.submit(Op::UserInput {
        items: vec![UserInput::Text {
            text: prompt.clone(),
        }],
    })?;

    let mut renderer: Box<dyn EventRenderer> = if args.json {
        Box::new(JsonOutput::default())
    } else {
        Box::new(HumanOutput::new(prompt.clone()))
    };
    let mut last_message: Option<String> = None;
    let mut succeeded = false;
    // The first stop signal, and a stdout that failed: both interrupt the turn.
    let mut stopped: Option<StopSignal> = None;
    let mut output_failed: Option<StdoutError> = None;
    let mut patience: Option<tokio::time::Instant> = None;
    loop {
        let event = tokio::select! {
            event = thread.next_event() => event,
            signal = signals.next() => {
                if let Some(first) = stopped {
                    return Ok(signals::give_up(first));
                }
                stopped = Some(signal);
                warn(format!(
                    "{} received: interrupting the turn (send it again to stop at once)",
                    signal.name()
                ));
                interrupt(&mut thread, &mut patience);
                continue;
            }
            () = sleep_until(patience) => {
                warn("the turn did not stop in time");
                return Ok(signals::give_up(stopped.unwrap_or(StopSignal::Interrupt)));
            }
        };
        let Some(event) = event else { break };
        if output_failed.is_none() {
            if let Err(err) = renderer.render(&event.msg) {
                // Nobody reads the events any more: stop the work, keep the thread sound.
                output_failed = Some(err);
                interrupt(&mut thread, &mut patience);
            }
        }
        match event.msg {
            // Nobody can answer here: deny, say so, and tell the user how to avoid it.
            EventMsg::ExecApprovalRequest {
                call_id, command, ..
            } => {
                let what = format!("`{}`", json_events::command_line(&command));
                deny_approval(&mut thread, call_id, &what)?;
            }
            EventMsg::ApplyPatchApprovalRequest { call_id, files, .. } => {
                let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                let what = format!("a patch to {}", names.join(", "));
                deny_approval(&mut thread, call_id, &what)?;
            }
            EventMsg::TurnComplete {
                last_agent_message, ..
            } => {
                last_message = last_agent_message;
                succeeded = true;
                break;
            }
            EventMsg::TurnAborted { .. } => break,
            // A sub-agent's approval request reaches this supervisor: denied like ours.
            EventMsg::AgentEvent { thread_id, msg, .. } => {
                // Only a child's approval requests need this loop; the renderer showed the rest.
                let (call_id, what) = if let EventMsg::ExecApprovalRequest {
                    call_id,
                    command,
                    ..
                } = *msg
                {
                    (
                        call_id,
                        format!("`{}`", json_events::command_line(&command)),
                    )
                } else if let EventMsg::ApplyPatchApprovalRequest { call_id, files, .. } = *msg {
                    let names: Vec<String> =
                        files.iter().map(|f| f.display().to_string()).collect();
                    (call_id, format!("a patch to {}", names.join(", ")))
                } else {
                    continue;
                };
                warn(format!(
                    "a sub-agent's {what} needs approval, which `troupe exec` cannot ask for: \
                     denied"
                ));
                thread.submit(Op::AgentApproval {
                    thread_id,
                    call_id,
                    decision: ReviewDecision::Denied,
                })?;
            }
            // Shown by the renderers above; nothing for the loop to do.
            EventMsg::SessionConfigured { .. }
            | EventMsg::TurnStarted { .. }
            | EventMsg::InputInjected { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentMessage { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::AgentReasoning { .. }
            | EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandEnd { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::PatchApplyEnd { .. }
            | EventMsg::PlanUpdated { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::StreamRetry { .. }
            | EventMsg::Warning { .. }
            | EventMsg::Error { .. }
            | EventMsg::CollabToolCall { .. }
            | EventMsg::HookStarted { .. }
            | EventMsg::HookCompleted { .. }
            | EventMsg::ShutdownComplete => {}
        }
    }
    // Wait for the session to shut down: its rollout is flushed and its lock released.
    if thread.submit(Op::Shutdown).is_ok() {
        let drained = async { while thread.next_event().await.is_some() {} };
        tokio::select! {
            _ = tokio::time::timeout(Duration::from_secs(10), drained) => {}
            signal = signals.next() => {
                return Ok(signals::give_up(stopped.unwrap_or(signal)));
            }
        }
    }
    runtime.stop();
    // Children never outlive troupe: whatever a command left running (a daemon) goes now.
    tokio::task::spawn_blocking(troupe_sandbox::descendants::kill_all_descendants)
        .await
        .ok();

    if let Some(path) = &args.output_last_message {
        std::fs::write(path, last_message.as_deref().unwrap_or(""))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(signal) = stopped {
        return Ok(signal.exit_code());
    }
    if let Some(err) = output_failed {
        return Err(err.into());
    }
    if !args.json {
        if let Some(message) = &last_message {
            crate::output::line(message)?;
        }
    }
    Ok(if succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// How long an interrupt may take before troupe gives up and kills everything itself.
const INTERRUPT_PATIENCE: Duration = Duration::from_secs(20);

/// Asks the session to stop the turn (once), and starts the clock on it.
fn interrupt(thread: &mut ThreadClient, patience: &mut Option<tokio::time::Instant>) {
    if patience.is_none() {
        *patience = Some(tokio::time::Instant::now() + INTERRUPT_PATIENCE);
        let _ = thread.submit(Op::Interrupt);
    }
}

/// Sleeps until `deadline`, or forever without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// `--cd DIR`: an existing directory, made absolute.
fn usable_dir(dir: &Path) -> Result<PathBuf> {
    let path = std::fs::canonicalize(dir)
        .with_context(|| format!("--cd {}: not a usable directory", dir.display()))?;
    if !path.is_dir() {
        bail!("--cd {}: not a directory", dir.display());
    }
    Ok(path)
}

/// `exec` has nobody to ask: deny, say so, and tell the user how to avoid it.
fn deny_approval(thread: &mut ThreadClient, call_id: String, what: &str) -> Result<()> {
    warn(format!(
        "{what} needs approval, which `troupe exec` cannot ask for: denied. Re-run with \
         `--ask-for-approval never`, `--full-auto`, or \
         `--dangerously-bypass-approvals-and-sandbox` to let it run without asking."
    ));
    thread.submit(Op::ExecApproval {
        call_id,
        decision: ReviewDecision::Denied,
    })?;
    Ok(())
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

/// A `.git` counts unless it is an empty placeholder a running sandbox mounted on (another
/// session's sandbox may hold one in `/tmp` or a parent of this directory for a while).
fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|d| {
        let marker = d.join(".git");
        marker.exists() && !troupe_config::layers::is_sandbox_placeholder(&marker)
    })
}
