//! `troupe debug replay ROLLOUT [--check]`: re-runs a recorded thread against the built-in
//! `replay` provider, which answers every request with the model output recorded for it.
//! Tools run for real, so `--check` catches both a prompt that changed (instructions, the
//! way the history is built) and a tool result that drifted; it fails naming the first
//! difference. A CI regression test of a whole agent session. A compacted thread replays
//! too: each compaction's request is answered with the summary its rollout recorded.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::sampler::replay::recording::{self, RecordedTurn, Recording};
use troupe_actors::sampler::replay::responses_in;
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, ReviewDecision, UserInput};
use troupe_messages::settings::{ReplaySource, SessionSettings};

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The rollout (`.jsonl`) of the thread to replay.
    rollout: PathBuf,
    /// Fail on the first request whose instructions or input differ from the recording, or
    /// when the replay makes a different number of requests.
    #[arg(long = "check")]
    check: bool,
    /// Run in DIR instead of the recorded working directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,
    /// Override a config value: `-c key=value`.
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
}

pub async fn run(args: ReplayArgs) -> Result<()> {
    let home = troupe_config::home::troupe_home()?;
    let rollout = std::fs::canonicalize(&args.rollout)
        .with_context(|| format!("cannot open {}", args.rollout.display()))?;
    let recorded = recording::load(&rollout).map_err(|e| anyhow!(e))?;
    let settings = replay_settings(&home, &args, &rollout, &recorded)?;
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools()).await?;
    let mut thread = runtime.start_thread(settings).await?;
    let outcome = replay_turns(&mut thread, &recorded).await;
    let _ = thread.submit(Op::Shutdown);
    let drained = async { while thread.next_event().await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_secs(10), drained).await;
    let requests = outcome?;
    if args.check && requests != recorded.requests.len() {
        bail!(
            "replay check failed: the replay made {requests} requests, the recording {}",
            recorded.requests.len()
        );
    }
    troupe_cli::output::line(format!(
        "replayed {} turns and {requests} requests{}",
        recorded.turns.len(),
        if args.check {
            "; every request matched the recording"
        } else {
            ""
        }
    ))?;
    Ok(())
}

/// The current config (so a changed build or config shows up as a difference), with the
/// recorded model, sandbox and approvals, and the `replay` provider.
fn replay_settings(
    home: &Path,
    args: &ReplayArgs,
    rollout: &Path,
    recorded: &Recording,
) -> Result<SessionSettings> {
    let Some(first) = &recorded.settings else {
        bail!("{}: no turn_context line", rollout.display());
    };
    let cwd = match &args.cd {
        Some(dir) => {
            std::fs::canonicalize(dir).with_context(|| format!("--cd {}", dir.display()))?
        }
        None => first.cwd.clone(),
    };
    if !cwd.is_dir() {
        bail!(
            "the recorded working directory {} does not exist here: pass --cd DIR",
            cwd.display()
        );
    }
    let loaded = load_config(
        home,
        &CliOverrides {
            raw: args.config.clone(),
            model: Some(first.model.clone()),
            sandbox_mode: Some(first.sandbox_mode),
            approval_policy: Some(first.approval_policy),
            cwd: Some(cwd),
            profile: None,
            ..CliOverrides::default()
        },
    )?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    let mut settings = loaded.settings;
    settings.provider.id = "replay".into();
    settings.provider.name = "replay of a recorded thread".into();
    settings.provider.base_url = format!("replay:{}", rollout.display());
    settings.provider.env_key = None;
    settings.provider.supports_websockets = false;
    settings.provider.replay = Some(ReplaySource {
        rollout: rollout.to_path_buf(),
        check: args.check,
    });
    Ok(settings)
}

/// Submits each recorded prompt (or `/compact`) and waits for its turn; the number of
/// requests answered, compactions included.
async fn replay_turns(thread: &mut ThreadClient, recorded: &Recording) -> Result<usize> {
    let mut answered = 0;
    for (number, turn) in recorded.turns.iter().enumerate() {
        thread.submit(match turn {
            RecordedTurn::Prompt(prompt) => Op::UserInput {
                items: vec![UserInput::Text {
                    text: prompt.clone(),
                }],
            },
            RecordedTurn::Compact => Op::Compact,
        })?;
        let mut error: Option<String> = None;
        // The turn's items (model outputs and tool results): its responses are the runs of
        // model-authored items between tool results.
        let mut items = Vec::new();
        loop {
            let Some(event) = thread.next_event().await else {
                bail!("the thread stopped during turn {}", number + 1);
            };
            match event.msg {
                EventMsg::ExecApprovalRequest { call_id, .. }
                | EventMsg::ApplyPatchApprovalRequest { call_id, .. } => {
                    // Nobody to ask, as in `exec`: the recording's answer is not known.
                    thread.submit(Op::ExecApproval {
                        call_id,
                        decision: ReviewDecision::Denied,
                    })?;
                }
                EventMsg::Error { error: e, .. } => error = Some(e.to_string()),
                EventMsg::ItemRecorded { item } => items.push(item),
                // A compaction was a request too; the history it replaced is not the input
                // of the requests after it.
                EventMsg::ContextCompacted { .. } => {
                    answered += responses_in(&items) + 1;
                    items.clear();
                }
                EventMsg::TurnComplete { .. } => {
                    answered += responses_in(&items);
                    break;
                }
                EventMsg::TurnAborted { reason, .. } => bail!(
                    "replay failed at turn {}: {}",
                    number + 1,
                    error.unwrap_or_else(|| format!("the turn was aborted ({reason:?})"))
                ),
                // A recorded thread's sub-agents are threads of their own: not replayed here.
                EventMsg::CollabToolCall { .. }
                | EventMsg::AgentEvent { .. }
                | EventMsg::SessionConfigured { .. }
                | EventMsg::TurnStarted { .. }
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
                | EventMsg::TokenCount { .. }
                | EventMsg::StreamRetry { .. }
                | EventMsg::Warning { .. }
                | EventMsg::HookStarted { .. }
                | EventMsg::HookCompleted { .. }
                | EventMsg::PermissionsGranted { .. }
                | EventMsg::GoalUpdated { .. }
                | EventMsg::RequestUserInput { .. }
                | EventMsg::ShutdownComplete => {}
            }
        }
    }
    Ok(answered)
}
