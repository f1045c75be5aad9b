//! The first stage of a local `troupe exec`: every flag checked, the thread to resume or
//! fork found, the prompt read and the settings resolved, before anything starts.

use crate::review::ReviewRun;
use crate::{output_schema, prompt_input, resume, warn_plain, workspace};
use crate::{ExecArgs, ExecCommand, ExecResume};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::sync::Arc;
use troupe_actors::thread_store::ThreadStore;
use troupe_cli::output::warn;
use troupe_config::file::HistoryToml;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::SessionSettings;
use troupe_messages::threads::ThreadSummary;

/// Everything a run needs before it starts, checked.
pub(crate) struct Prepared {
    pub(crate) home: PathBuf,
    pub(crate) store: Option<Arc<ThreadStore>>,
    /// `--ephemeral`: removed (with every rollout in it) when the run ends.
    pub(crate) ephemeral_dir: Option<tempfile::TempDir>,
    /// The thread resumed or forked, if any.
    pub(crate) target: Option<ThreadSummary>,
    pub(crate) prompt: String,
    pub(crate) review: Option<ReviewRun>,
    pub(crate) settings: SessionSettings,
    pub(crate) history: HistoryToml,
    pub(crate) output_schema: Option<serde_json::Value>,
    pub(crate) image_urls: Vec<String>,
}

/// Bad arguments fail here, before anything is read, created or started.
pub(crate) async fn prepare(args: &mut ExecArgs) -> Result<Prepared> {
    let home = troupe_config::home::troupe_home()?;
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
            let destination = ephemeral_dir.as_ref().map(tempfile::TempDir::path);
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
    apply_run_options(&mut settings, args, extra_roots, output_schema.clone())?;
    if let Some(review) = &review {
        review.apply(&mut settings, &args.flags);
    }
    if let Some(dir) = &ephemeral_dir {
        settings.rollout_dir = Some(dir.path().to_path_buf());
    }
    Ok(Prepared {
        home,
        store,
        ephemeral_dir,
        target,
        prompt,
        review,
        settings,
        history,
        output_schema,
        image_urls,
    })
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
