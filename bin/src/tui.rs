//! `troupe [PROMPT]`, `troupe resume [ID|--last]` and `troupe fork ID` in a terminal: the
//! interactive UI (crate `troupe-tui`) over the in-process runtime, with `exec`'s flags.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::IsTerminal;
use std::process::ExitCode;
use troupe_actors::runtime::Runtime;
use troupe_actors::thread_store::ops;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_cli::session_flags::SessionFlags;
use troupe_cli::threads::{self, ForkArgs, Reconcile};
use troupe_config::file::{HistoryPersistence, HistoryToml};
use troupe_exec::resume::{self, ResumeArgs};
use troupe_messages::policy::AskForApproval;
use troupe_messages::threads::ThreadSummary;
use troupe_tui::resume_picker::ResumeAnswer;
use troupe_tui::run::{HistoryRecorder, PromptHistory};
use troupe_tui::trust_screen::{TrustAnswer, TrustQuestion};
use troupe_tui::{LaunchStarting, TuiExit};

/// `troupe [FLAGS] [PROMPT]`.
#[derive(Debug, Args)]
pub struct TuiArgs {
    #[command(flatten)]
    pub flags: SessionFlags,
    /// The first message; without it the UI opens on an empty composer.
    pub prompt: Option<String>,
}

/// `troupe resume [ID|--last] [PROMPT]`; neither: a picker.
#[derive(Debug, Args)]
pub struct ResumeCommand {
    /// Thread id (or a unique prefix of it). With `--last`, this is the prompt instead.
    /// Without an id or `--last`: a picker over the recorded threads.
    session_id: Option<String>,
    /// The follow-up prompt.
    prompt: Option<String>,
    /// Continue the most recently updated thread of this directory.
    #[arg(long = "last")]
    last: bool,
    /// With `--last`, consider threads of every directory.
    #[arg(long = "all")]
    all: bool,
    #[command(flatten)]
    flags: SessionFlags,
}

impl ResumeCommand {
    /// The same choice as `exec resume`'s arguments (one way to find the thread).
    fn exec_args(&self) -> Result<ResumeArgs> {
        #[derive(clap::Parser)]
        #[command(no_binary_name = true)]
        struct Parsed {
            #[command(flatten)]
            args: ResumeArgs,
        }
        let mut argv: Vec<String> = Vec::new();
        if self.last {
            argv.push("--last".into());
        }
        if self.all {
            argv.push("--all".into());
        }
        argv.push("--".into());
        argv.extend(self.session_id.iter().cloned());
        argv.extend(self.prompt.iter().cloned());
        Ok(<Parsed as clap::Parser>::try_parse_from(argv)?.args)
    }
}

/// `troupe fork ID [--at-turn N]`.
#[derive(Debug, Args)]
pub struct ForkCommand {
    #[command(flatten)]
    fork: ForkArgs,
    #[command(flatten)]
    flags: SessionFlags,
}

pub async fn run(args: TuiArgs) -> Result<ExitCode> {
    open(args.flags, None, args.prompt).await
}

pub async fn resume(args: ResumeCommand) -> Result<ExitCode> {
    let home = crate::home()?;
    if args.session_id.is_none() && !args.last {
        return resume_picked(&home, args).await;
    }
    let store = threads::open_store(&home, Reconcile::Skip);
    let cd = args.flags.cd_dir()?;
    let (target, prompt) = resume::pick(&home, store.as_deref(), args.exec_args()?, cd.as_deref())?;
    drop(store);
    open(args.flags, Some(target), prompt).await
}

/// `troupe resume` alone: the picker chooses (Esc: a new thread instead).
async fn resume_picked(home: &std::path::Path, args: ResumeCommand) -> Result<ExitCode> {
    if !interactive() {
        bail!("give a thread id to resume, or --last (`troupe list` shows the ids)");
    }
    let listed = {
        let home = home.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let store = threads::open_store(&home, Reconcile::Skip);
            troupe_tui::run::list_threads(&home, store.as_deref())
        })
        .await?
    };
    let items = listed.map_err(|err| anyhow::anyhow!("cannot list threads: {err}"))?;
    let answer = troupe_tui::resume_picker::ask_resume(items)
        .await
        .context("the resume picker")?;
    match answer {
        ResumeAnswer::Resume(target) => open(args.flags, Some(*target), None).await,
        ResumeAnswer::New => open(args.flags, None, None).await,
        ResumeAnswer::Quit => Ok(ExitCode::SUCCESS),
    }
}

/// Opens the fork in the UI; without a terminal (a script) it only prints the new id, as
/// `troupe fork` always did.
pub async fn fork(args: ForkCommand) -> Result<ExitCode> {
    let home = crate::home()?;
    if !interactive() {
        threads::fork(&home, args.fork)?;
        return Ok(ExitCode::SUCCESS);
    }
    let store = threads::open_store(&home, Reconcile::Skip);
    let forked = ops::fork(&home, store.as_deref(), &args.fork.id, args.fork.at_turn)?;
    drop(store);
    open(args.flags, Some(forked), None).await
}

fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

async fn open(
    mut flags: SessionFlags,
    target: Option<ThreadSummary>,
    prompt: Option<String>,
) -> Result<ExitCode> {
    if !interactive() {
        bail!("the interactive UI needs a terminal; run a task with `troupe exec \"PROMPT\"`");
    }
    let home = crate::home()?;
    // The thread index (sled) opens while the configuration loads and the first frame is
    // drawn; the runtime starts on it behind the first frame.
    let store = {
        let home = home.clone();
        tokio::task::spawn_blocking(move || threads::open_store(&home, Reconcile::Skip))
    };
    let cwd = match (flags.cd_dir()?, &target) {
        (Some(dir), _) => dir,
        (None, Some(target)) => target.cwd.clone(),
        (None, None) => std::env::current_dir().context("cannot read the current directory")?,
    };
    // The UI opens outside Git too (as Codex's does): the trust screen below is where the
    // user decides how much a folder allows; `exec` keeps its check.
    flags.skip_git_repo_check = true;
    // Somebody is there to ask: `--full-auto` keeps the sandbox and asks when it must.
    let mut loaded = flags
        .load(&home, cwd.clone(), AskForApproval::OnRequest)
        .await?;
    if !loaded.trusted && !flags.chose_permissions() {
        match ask_trust(&home, &cwd).await? {
            Some(TrustAnswer::Trust) => {
                // Reloaded: the project files just pinned are part of the settings now.
                loaded = flags
                    .load(&home, cwd.clone(), AskForApproval::OnRequest)
                    .await?;
            }
            Some(TrustAnswer::Quit) => return Ok(ExitCode::SUCCESS),
            Some(TrustAnswer::DoNotTrust) | None => {}
        }
    }
    let mut settings = loaded.settings;
    if let Some(mode) = loaded.trusted_sandbox_default {
        settings.sandbox_mode = mode;
    }
    let history = prompt_history(&home, loaded.history);
    let starting: troupe_tui::Starting = Box::pin(async move {
        let store = store.await.unwrap_or(None);
        let runtime =
            Runtime::start_with_store(ToolRegistry::with_builtin_tools(), store.clone()).await?;
        Ok((runtime, store))
    });
    let exit = troupe_tui::run_starting(LaunchStarting {
        starting,
        settings,
        home,
        resume: target.map(|t| t.rollout_path),
        prompt,
        history,
    })
    .await;
    // Children never outlive troupe: whatever a command left running goes now.
    tokio::task::spawn_blocking(troupe_sandbox::descendants::kill_all_descendants)
        .await
        .ok();
    Ok(match exit? {
        TuiExit::Quit => ExitCode::SUCCESS,
        TuiExit::Signal(number) => ExitCode::from(128u8.saturating_add(number as u8)),
    })
}

/// The first-start trust screen for `cwd`, unless the user already answered it there. "Trust"
/// records the folder and pins the project files' contents as listed on the screen; "do not
/// trust" is remembered (the folder stays untrusted, the screen is not shown again).
async fn ask_trust(home: &std::path::Path, cwd: &std::path::Path) -> Result<Option<TrustAnswer>> {
    let dir = std::fs::canonicalize(cwd).with_context(|| format!("{}", cwd.display()))?;
    if troupe_cli::trust::has_decided(home, &dir)? {
        return Ok(None);
    }
    let files = troupe_cli::trust::pinnable_files(home, &dir)?;
    let question = TrustQuestion {
        project_files: files.iter().map(|(path, _)| path.clone()).collect(),
        version_controlled: troupe_cli::session_flags::inside_git_repo(&dir),
        dir: dir.clone(),
    };
    let answer = troupe_tui::trust_screen::ask_trust(&question)
        .await
        .context("the trust screen")?;
    match answer {
        TrustAnswer::Trust => troupe_cli::trust::trust_shown(home, &dir, files)?,
        TrustAnswer::DoNotTrust => troupe_cli::trust::decline(home, &dir)?,
        TrustAnswer::Quit => {}
    }
    Ok(Some(answer))
}

/// The prompt history the UI browses and appends to, as `[history]` allows: with
/// `persistence = "none"` nothing is read or written.
fn prompt_history(home: &std::path::Path, config: HistoryToml) -> PromptHistory {
    if config.persistence == Some(HistoryPersistence::None) {
        return PromptHistory::default();
    }
    let entries = troupe_cli::history::load_texts(home, &config);
    let home = home.to_path_buf();
    let record: HistoryRecorder = std::sync::Arc::new(move |session_id: &str, text: &str| {
        troupe_cli::history::record(&home, &config, session_id, text)
            .map_err(|err| format!("{err:#}"))
    });
    PromptHistory {
        entries,
        record: Some(record),
    }
}
