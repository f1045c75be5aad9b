//! `troupe review` and `troupe exec review`: a code review of the uncommitted changes, of
//! the current branch against a base branch, or of one commit. It is an `exec` run with the
//! review instructions in place of the base instructions, the target named in the user
//! message, a read-only sandbox unless a sandbox flag says otherwise, and the model's JSON
//! answer checked and rendered (`troupe_actors::review`). As in Codex, `exec review --json`
//! shows the rendered review as the run's `agent_message`; `troupe review --json` prints the
//! structured review itself.

use crate::render::EventRenderer;
use anyhow::{bail, Result};
use clap::Args;
use std::path::Path;
use troupe_actors::review::{self, output, ReviewTarget, ReviewTargetError};
use troupe_cli::output::{warn, StdoutError};
use troupe_cli::session_flags::SessionFlags;
use troupe_messages::events::EventMsg;
use troupe_messages::policy::SandboxMode;
use troupe_messages::settings::SessionSettings;

/// What to review (shared by `troupe review` and `troupe exec review`).
#[derive(Debug, Default, Args)]
pub struct ReviewTargetArgs {
    /// Review staged, unstaged and untracked changes (the default without a target).
    #[arg(long = "uncommitted", conflicts_with_all = ["base", "commit"])]
    pub uncommitted: bool,
    /// Review the current branch's changes against BRANCH (from their merge base).
    #[arg(long = "base", value_name = "BRANCH", conflicts_with = "commit")]
    pub base: Option<String>,
    /// Review the changes introduced by one commit.
    #[arg(long = "commit", value_name = "SHA")]
    pub commit: Option<String>,
    /// The commit's title, shown to the reviewer (with `--commit`).
    #[arg(long = "title", value_name = "TITLE", requires = "commit")]
    pub title: Option<String>,
    /// Custom review instructions (`-` reads them from stdin): alone, they are the whole
    /// request; with a target, they follow it.
    pub prompt: Option<String>,
}

/// `troupe exec review …`: the target, and session flags that may follow `review`.
#[derive(Debug, Args)]
pub struct ExecReviewArgs {
    #[command(flatten)]
    pub target: ReviewTargetArgs,
    #[command(flatten)]
    pub flags: SessionFlags,
}

/// `troupe review …`.
#[derive(Debug, Args)]
pub struct ReviewCommand {
    #[command(flatten)]
    pub target: ReviewTargetArgs,
    #[command(flatten)]
    pub flags: SessionFlags,
    /// Print the review as one JSON object on stdout (findings with file, line range,
    /// priority, title and body; the overall verdict and its explanation).
    #[arg(long = "json")]
    pub json: bool,
}

/// A review run, ready to start.
#[derive(Debug)]
pub struct ReviewRun {
    /// The user message: what to review.
    pub prompt: String,
    /// What the human output's header shows as the request.
    pub label: String,
    /// Print the structured review (`troupe review --json`) instead of its rendering.
    pub structured_json: bool,
}

impl ReviewRun {
    /// Checks the target against the repository at `cwd` and builds the request. A missing
    /// repository, branch or commit is an error naming the argument, before anything runs.
    pub fn prepare(target: ReviewTargetArgs, cwd: &Path, structured_json: bool) -> Result<Self> {
        let instructions = match target.prompt.as_deref() {
            Some(text) => Some(crate::read_prompt(Some(text))?),
            None => None,
        };
        let (chosen, flag) = if let Some(branch) = target.base {
            let flag = format!("--base {branch}");
            (Some(ReviewTarget::BaseBranch { branch }), flag)
        } else if let Some(sha) = target.commit {
            let flag = format!("--commit {sha}");
            let title = target.title;
            (Some(ReviewTarget::Commit { sha, title }), flag)
        } else if target.uncommitted {
            (Some(ReviewTarget::Uncommitted), "--uncommitted".to_string())
        } else {
            (None, String::new())
        };
        // Instructions alone are the whole request (as Codex); nothing at all reviews the
        // uncommitted changes.
        let (resolved, extra) = match (chosen, instructions) {
            (Some(target), extra) => (review::resolve(&target, cwd), extra),
            (None, Some(instructions)) => (
                review::resolve(&ReviewTarget::Custom { instructions }, cwd),
                None,
            ),
            (None, None) => (review::resolve(&ReviewTarget::Uncommitted, cwd), None),
        };
        let request = resolved.map_err(|err| match err {
            ReviewTargetError::NotARepository { .. } => {
                anyhow::anyhow!("review: {err} (pass --cd DIR to review another repository)")
            }
            other if flag.is_empty() => anyhow::anyhow!("review: {other}"),
            other => anyhow::anyhow!("{flag}: {other}"),
        })?;
        let prompt = match extra {
            Some(extra) => format!("{}\n\n{extra}", request.prompt),
            None => request.prompt,
        };
        Ok(Self {
            prompt,
            label: request.label,
            structured_json,
        })
    }

    /// The review instructions replace the base instructions; commands run read-only unless
    /// the command line chose a sandbox (`-s`, `--full-auto`, the bypass flag).
    pub fn apply(&self, settings: &mut SessionSettings, flags: &SessionFlags) {
        settings.base_instructions = review::prompt::REVIEW_INSTRUCTIONS.to_string();
        if flags.sandbox.is_none() && !flags.full_auto && !flags.yolo {
            settings.sandbox_mode = SandboxMode::ReadOnly;
        }
    }

    /// What `exec` prints on stdout and writes to `-o` once the turn completed: the rendered
    /// review, or the structured one; a final message that is not a review fails the
    /// structured output and is shown as it is otherwise (with a warning, given once by the
    /// renderer).
    pub fn finish(&self, last_message: Option<String>) -> Result<Option<String>> {
        let text = last_message.unwrap_or_default();
        match output::parse(&text) {
            Ok(review) if self.structured_json => Ok(Some(serde_json::to_string_pretty(&review)?)),
            Ok(review) => Ok(Some(output::render(&review))),
            Err(err) if self.structured_json => {
                bail!("review: the model's answer is not a review: {err}")
            }
            Err(_) => Ok(Some(text)),
        }
    }
}

/// Shows a review run's events: the model's messages are held back, and when the turn
/// completes the review is shown once, rendered, as the run's agent message (Codex shows
/// only the finished review too).
pub struct ReviewRenderer {
    inner: Box<dyn EventRenderer>,
}

impl ReviewRenderer {
    pub fn new(inner: Box<dyn EventRenderer>) -> Self {
        Self { inner }
    }
}

impl EventRenderer for ReviewRenderer {
    fn render(&mut self, msg: &EventMsg) -> Result<(), StdoutError> {
        if let EventMsg::AgentMessage { .. } = msg {
            return Ok(());
        }
        if let EventMsg::TurnComplete {
            last_agent_message, ..
        } = msg
        {
            let text = last_agent_message.clone().unwrap_or_default();
            let message = match output::parse(&text) {
                Ok(review) => output::render(&review),
                Err(err) => {
                    warn(format!(
                        "the model's answer is not in the review format ({err}); shown as it is"
                    ));
                    text
                }
            };
            self.inner.render(&EventMsg::AgentMessage { message })?;
        }
        self.inner.render(msg)
    }
}
