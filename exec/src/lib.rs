//! `troupe exec`: one task, non-interactively. Flags follow Codex's `codex exec`, so scripts
//! written for it work unchanged.

mod color;
mod human;
pub mod json_events;
mod output_schema;
mod prompt_input;
mod remote;
pub mod render;
pub mod resume;
pub mod review;
use troupe_cli::signals;
pub mod thread_event;
mod workspace;

pub use prompt_input::read_prompt;

use anyhow::{bail, Context, Result};
use clap::Args;
use color::ColorArg;
use human::HumanOutput;
use json_events::JsonOutput;
use render::EventRenderer;
use signals::{StopSignal, StopSignals};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_cli::output::warn;
use troupe_cli::output::StdoutError;
use troupe_cli::session_flags::SessionFlags;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::terminal_text::visible;

#[derive(Debug, Default, Args)]
pub struct ExecArgs {
    /// Print events as JSON lines on stdout.
    #[arg(long = "json", alias = "experimental-json", global = true)]
    json: bool,
    #[command(flatten)]
    flags: SessionFlags,
    /// Write the last agent message to FILE.
    #[arg(
        short = 'o',
        long = "output-last-message",
        value_name = "FILE",
        global = true
    )]
    output_last_message: Option<PathBuf>,
    /// Attach image(s) to the prompt (PNG, JPEG, GIF, WebP; comma-separated or repeated).
    #[arg(short = 'i', long = "image", value_name = "FILE", num_args = 1.., value_delimiter = ',', global = true)]
    images: Vec<PathBuf>,
    /// Load no `.rules` file (user or project) for this run.
    #[arg(long = "ignore-rules", global = true)]
    ignore_rules: bool,
    /// Trust the working directory and pin its project files (as `troupe trust`) first.
    #[arg(long = "trust", global = true)]
    trust: bool,
    /// Keep nothing on disk: no rollout, no index entry, no prompt history.
    #[arg(long = "ephemeral", global = true)]
    ephemeral: bool,
    /// Another directory commands may write (workspace-write sandbox; repeatable).
    #[arg(long = "add-dir", value_name = "DIR", global = true)]
    add_dir: Vec<PathBuf>,
    /// A JSON Schema the final message must follow (sent as the response format, checked).
    #[arg(long = "output-schema", value_name = "FILE", global = true)]
    output_schema: Option<PathBuf>,
    /// Run in a new Git worktree on its own branch (under `$TROUPE_HOME/worktrees`).
    #[arg(long = "worktree", global = true)]
    worktree: bool,
    /// Colour in the human output on stderr (`auto`: on a terminal, unless `NO_COLOR`).
    #[arg(long = "color", value_enum, default_value_t = ColorArg::Auto, global = true)]
    color: ColorArg,
    /// Give the thread a goal: after each turn it goes on by itself (a follow-up turn per
    /// `max_goal_turns`) until the model reports it complete or blocked, or the budget is
    /// spent. Without a prompt, the objective is the prompt.
    #[arg(long = "goal", value_name = "OBJECTIVE")]
    goal: Option<String>,
    /// Token budget of `--goal` (a positive number of tokens).
    #[arg(
        long = "goal-budget",
        value_name = "TOKENS",
        requires = "goal",
        allow_negative_numbers = true,
        value_parser = positive_budget
    )]
    goal_budget: Option<i64>,
    /// The task; `-` or absent reads it from stdin; piped stdin beside a prompt is appended
    /// to it as a `<stdin>` block.
    prompt: Option<String>,
    #[command(subcommand)]
    command: Option<ExecCommand>,
    /// Run the whole thread on a worker of the scale-out pool (`[cluster]`, `troupe worker`).
    #[arg(long = "remote")]
    remote: bool,
    /// `troupe review --json`: print the structured review (not an `exec` flag).
    #[arg(skip)]
    structured_review: bool,
}

impl ExecArgs {
    /// `exec resume ID PROMPT` (`troupe queue --resume`).
    pub fn for_resume(id: String, prompt: String) -> Self {
        Self {
            command: Some(ExecCommand::Resume(ExecResume {
                resume: resume::ResumeArgs::by_id(id, prompt),
                // The thread already ran in its directory; where that is was checked then.
                flags: SessionFlags {
                    skip_git_repo_check: true,
                    ..SessionFlags::default()
                },
            })),
            ..Self::default()
        }
    }

    /// `troupe review …`: an `exec review` run with these flags.
    pub fn for_review(review: crate::review::ReviewCommand) -> Self {
        Self {
            structured_review: review.json,
            command: Some(ExecCommand::Review(crate::review::ExecReviewArgs {
                target: review.target,
                flags: review.flags,
            })),
            ..Self::default()
        }
    }
}

#[derive(Debug, clap::Subcommand)]
enum ExecCommand {
    /// Continue a recorded thread with a new prompt.
    Resume(ExecResume),
    /// Fork a recorded thread into a new one and run a turn on the fork.
    Fork(ExecFork),
    /// Review the uncommitted changes, a branch against its base, or a commit.
    Review(crate::review::ExecReviewArgs),
}

/// `exec resume …`: the thread to pick, and session flags that may follow `resume`.
#[derive(Debug, Args)]
struct ExecResume {
    #[command(flatten)]
    resume: resume::ResumeArgs,
    #[command(flatten)]
    flags: SessionFlags,
}

/// `exec fork ID [PROMPT]`: the thread to copy, and session flags that may follow `fork`.
#[derive(Debug, Args)]
struct ExecFork {
    /// Thread id (or a unique prefix of it) to fork.
    session_id: String,
    /// The prompt of the fork's first turn; `-` or absent reads it from stdin.
    prompt: Option<String>,
    #[command(flatten)]
    flags: SessionFlags,
}

/// Runs the task; the exit code says whether the turn completed.
pub async fn run(mut args: ExecArgs) -> Result<ExitCode> {
    if args.remote {
        return remote::run(args).await;
    }
    let home = troupe_config::home::troupe_home()?;
    // Bad arguments fail before anything is read, created or started.
    let output_schema = args
        .output_schema
        .as_deref()
        .map(output_schema::load)
        .transpose()?;
    let extra_roots = workspace::extra_writable_roots(&args.add_dir)?;
    let image_urls = attached_images(&args.images)?;
    if args.ephemeral && matches!(args.command, Some(ExecCommand::Resume(_))) {
        bail!("--ephemeral cannot resume a thread: resuming appends to its recorded rollout");
    }
    // An ephemeral run opens no thread index (it would create one under TROUPE_HOME).
    let store = if args.ephemeral {
        None
    } else {
        troupe_cli::threads::open_store(&home, troupe_cli::threads::Reconcile::Skip)
    };
    // Removed (with every rollout in it) when exec returns.
    let ephemeral_dir = if args.ephemeral {
        Some(
            tempfile::Builder::new()
                .prefix("troupe-ephemeral-")
                .tempdir()
                .context("--ephemeral: cannot create a private temporary directory")?,
        )
    } else {
        None
    };
    let mut review_target = None;
    // A fork is a new thread (its own rollout), so it may run in a new worktree.
    let mut forked_thread = false;
    let (target, prompt, cd) = match args.command.take() {
        Some(ExecCommand::Resume(ExecResume { resume, flags })) => {
            // Options may follow `resume` too (as Codex's `exec resume ID --json -m …`).
            args.flags.absorb(flags);
            let cd = args.flags.cd_dir()?;
            let (target, prompt) = resume::pick(&home, store.as_deref(), resume, cd.as_deref())?;
            (Some(target), prompt, cd)
        }
        Some(ExecCommand::Fork(fork)) => {
            args.flags.absorb(fork.flags);
            let cd = args.flags.cd_dir()?;
            // An ephemeral fork is written to the run's private directory (removed at the
            // end), so nothing is left under TROUPE_HOME; the source is only read (found by
            // scanning the rollouts when no index is open).
            let destination = ephemeral_dir.as_ref().map(|dir| dir.path());
            let forked = troupe_actors::thread_store::ops::fork_into(
                &home,
                store.as_deref(),
                &fork.session_id,
                None,
                destination,
            )?;
            warn_plain(format!("forked {} into {}", fork.session_id, forked.id));
            forked_thread = true;
            (Some(forked), fork.prompt, cd)
        }
        Some(ExecCommand::Review(review)) => {
            args.flags.absorb(review.flags);
            review_target = Some(review.target);
            (None, None, args.flags.cd_dir()?)
        }
        None => {
            let prompt = args.prompt.clone().or_else(|| args.goal.clone());
            (None, prompt, args.flags.cd_dir()?)
        }
    };
    if let Some(goal) = &args.goal {
        if goal.trim().is_empty() {
            bail!("--goal: the objective is empty");
        }
    }
    let mut cwd = match (cd, &target) {
        (Some(dir), _) => dir,
        (None, Some(target)) => target.cwd.clone(),
        (None, None) => std::env::current_dir().context("cannot read the current directory")?,
    };
    // A review's request comes from its target (checked against the repository first).
    let review = match review_target {
        Some(target) => Some(crate::review::ReviewRun::prepare(
            target,
            &cwd,
            args.structured_review,
        )?),
        None => None,
    };
    let prompt = match &review {
        Some(review) => review.prompt.clone(),
        None => prompt_input::read_prompt(prompt.as_deref())?,
    };
    if args.worktree {
        if target.is_some() && !forked_thread {
            bail!("--worktree starts a new thread; it cannot be combined with `resume`");
        }
        if review.is_some() {
            bail!("--worktree cannot be combined with `review`: a review reads the changes where they are");
        }
        let worktree = workspace::create_worktree(&cwd, &home)?;
        warn_plain(format!(
            "worktree: {} (branch {})",
            worktree.root.display(),
            worktree.branch
        ));
        cwd = worktree.cwd;
    }
    args.flags.check_git_repo(&cwd)?;
    if args.trust {
        let pinned = troupe_cli::trust::trust_quietly(&home, &cwd)?;
        warn_plain(format!(
            "trusted {} ({pinned} project file(s) pinned)",
            cwd.display()
        ));
    }
    // The full-auto flags mean "do not stop to ask": exec has nobody to ask anyway.
    let loaded = args.flags.load(&home, cwd, AskForApproval::Never).await?;
    let history = loaded.history;
    let mut settings = loaded.settings;
    apply_run_options(&mut settings, &args, extra_roots, output_schema.clone())?;
    if let Some(review) = &review {
        review.apply(&mut settings, &args.flags);
    }
    if let Some(dir) = &ephemeral_dir {
        settings.rollout_dir = Some(dir.path().to_path_buf());
    }

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
    // As Codex: each image between `<image name=[Image #N] path="…">` and `</image>` text
    // parts, the images first, then the prompt.
    let mut items = Vec::new();
    for (n, (path, image_url)) in args.images.iter().zip(image_urls).enumerate() {
        items.push(UserInput::Text {
            text: format!(
                "<image name=[Image #{}] path=\"{}\">",
                n + 1,
                path.display()
            ),
        });
        items.push(UserInput::Image { image_url });
        items.push(UserInput::Text {
            text: "</image>".into(),
        });
    }
    items.push(UserInput::Text {
        text: prompt.clone(),
    });
    if let Some(objective) = args.goal.clone() {
        thread.submit(Op::CreateGoal {
            objective,
            token_budget: args.goal_budget,
        })?;
    }
    thread.submit(Op::UserInput { items })?;

    let shown_prompt = review.as_ref().map_or(&prompt, |r| &r.label).clone();
    let mut renderer: Box<dyn EventRenderer> = if args.json {
        Box::new(JsonOutput::default())
    } else {
        Box::new(HumanOutput::new(shown_prompt, args.color.enabled()))
    };
    if review.is_some() {
        renderer = Box::new(crate::review::ReviewRenderer::new(renderer));
    }
    let mut last_message: Option<String> = None;
    let mut succeeded = false;
    // The first stop signal, and a stdout that failed: both interrupt the turn.
    let mut stopped: Option<StopSignal> = None;
    let mut output_failed: Option<StdoutError> = None;
    let mut patience: Option<tokio::time::Instant> = None;
    // The goal's follow-up turn comes after this turn (said before its `TurnComplete`).
    let mut goal_continues = false;
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
                if std::mem::take(&mut goal_continues) && stopped.is_none() {
                    continue;
                }
                break;
            }
            EventMsg::GoalUpdated { continuing, .. } => goal_continues = continuing,
            // Nobody can be asked: the recommended options, and a note saying so.
            EventMsg::RequestUserInput { call_id, questions } => {
                answer_questions(&mut thread, call_id, &questions)?;
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
            EventMsg::SessionConfigured { thread_id, .. } => {
                if !args.ephemeral {
                    if let Err(err) = troupe_cli::history::record(
                        &home,
                        &history,
                        &thread_id.to_string(),
                        &prompt,
                    ) {
                        warn(format!("the prompt history was not saved: {err:#}"));
                    }
                }
            }
            // Shown by the renderers above; nothing for the loop to do.
            EventMsg::TurnStarted { .. }
            | EventMsg::InputInjected { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentMessage { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ExecCommandOutputDelta { .. }
            | EventMsg::AgentReasoning { .. }
            | EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandEnd { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::McpToolCallBegin { .. }
            | EventMsg::McpToolCallEnd { .. }
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
            | EventMsg::PermissionsGranted { .. }
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

    if let (Some(review), true) = (&review, succeeded) {
        last_message = review.finish(last_message)?;
    }
    if let Some(path) = &args.output_last_message {
        troupe_cli::output::write_user_file(path, last_message.as_deref().unwrap_or("").as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    drop(ephemeral_dir);
    if let Some(signal) = stopped {
        return Ok(signal.exit_code());
    }
    if let Some(err) = output_failed {
        return Err(err.into());
    }
    if let (Some(schema), true) = (&output_schema, succeeded) {
        if let Err(problem) = output_schema::check_answer(schema, last_message.as_deref()) {
            bail!("--output-schema: {problem}");
        }
    }
    if !args.json {
        if let Some(message) = &last_message {
            troupe_cli::output::line(visible(message))?;
        }
    }
    Ok(if succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `--goal-budget`: a positive number of tokens.
fn positive_budget(text: &str) -> Result<i64, String> {
    match text.trim().parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        Ok(n) => Err(format!("{n} is not a positive number of tokens")),
        Err(err) => Err(format!("`{text}` is not a number of tokens: {err}")),
    }
}

/// `request_user_input` in a run nobody watches: each question gets its recommended (first)
/// option, and stderr says which.
fn answer_questions(
    thread: &mut ThreadClient,
    call_id: String,
    questions: &[troupe_messages::questions::UserQuestion],
) -> Result<()> {
    use troupe_actors::tool_orchestrator::tools::request_user_input::recommended_answers;
    let answers = recommended_answers(questions);
    for question in questions {
        let chosen = answers
            .get(&question.id)
            .and_then(|a| a.answers.first())
            .map_or("no answer (it offered no option)".to_string(), |label| {
                format!("`{label}`")
            });
        warn(format!(
            "the model asked \"{}\"; `troupe exec` cannot ask anyone, so it answered with the \
             recommended option: {chosen}",
            question.question
        ));
    }
    thread.submit(Op::UserInputAnswer { call_id, answers })?;
    Ok(())
}

/// `-i FILE…`: each image's `data:` URL; a missing, unreadable, oversized or non-image file
/// is an error naming it, before anything runs.
fn attached_images(paths: &[PathBuf]) -> Result<Vec<String>> {
    use troupe_actors::tool_orchestrator::tools::local_image::load_data_url;
    paths
        .iter()
        .map(|path| load_data_url(path).map_err(|err| anyhow::anyhow!("--image {err}")))
        .collect()
}

/// What this run's flags change in the resolved settings.
fn apply_run_options(
    settings: &mut troupe_messages::settings::SessionSettings,
    args: &ExecArgs,
    extra_roots: Vec<PathBuf>,
    output_schema: Option<serde_json::Value>,
) -> Result<()> {
    use troupe_messages::settings::WireApi;
    if !extra_roots.is_empty() && settings.sandbox_mode != SandboxMode::WorkspaceWrite {
        warn(format!(
            "--add-dir widens only the workspace-write sandbox; this run is {}",
            settings.sandbox_mode.as_str()
        ));
    }
    settings.sandbox.writable_roots.extend(extra_roots);
    settings.sandbox.ignore_rules = args.ignore_rules;
    if output_schema.is_some() && settings.provider.wire_api == WireApi::Anthropic {
        bail!(
            "--output-schema: provider `{}` speaks the anthropic wire, which has no structured \
             response format",
            settings.provider.id
        );
    }
    settings.context.output_schema = output_schema;
    if settings.context.model_verbosity.is_some()
        && settings.provider.wire_api != WireApi::Responses
    {
        warn(format!(
            "model_verbosity is sent only on the responses wire; provider `{}` does not speak it, \
             so it is not sent",
            settings.provider.id
        ));
    }
    Ok(())
}

/// A note on stderr without the `warning:` prefix, control characters made visible.
pub(crate) fn warn_plain(text: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{}", visible(&text));
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
