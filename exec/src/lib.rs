//! `troupe exec`: one task, non-interactively. Flags follow Codex's `codex exec`, so scripts
//! written for it work unchanged.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

mod color;
mod ending;
mod human;
pub mod json_events;
mod local;
mod output_schema;
mod prepare;
mod prompt_input;
mod remote;
pub mod render;
pub mod resume;
pub mod review;
use troupe_cli::signals;
pub mod thread_event;
mod workspace;

pub use prompt_input::read_prompt;

use anyhow::Result;
use clap::Args;
use color::ColorArg;
use std::path::PathBuf;
use std::process::ExitCode;
use troupe_cli::session_flags::SessionFlags;
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
pub async fn run(args: ExecArgs) -> Result<ExitCode> {
    if args.remote {
        return remote::run(args).await;
    }
    local::run(args).await
}

/// `--goal-budget`: a positive number of tokens.
fn positive_budget(text: &str) -> Result<i64, String> {
    match text.trim().parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        Ok(n) => Err(format!("{n} is not a positive number of tokens")),
        Err(err) => Err(format!("`{text}` is not a number of tokens: {err}")),
    }
}

/// A note on stderr without the `warning:` prefix, control characters made visible.
pub(crate) fn warn_plain(text: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{}", visible(&text));
}
