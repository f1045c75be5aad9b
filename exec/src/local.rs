//! A local `troupe exec`, in its stages: `prepare` checks the flags and resolves the thread,
//! prompt and settings before anything starts; [`start`] opens the thread and sends the
//! input; [`drive`] shows its events and answers what nobody can be asked; [`close`] shuts the
//! session down (its rollout flushed, its lock released); `ending::finish` says how it ended.

use crate::ending::{self, RunEnd};
use crate::human::HumanOutput;
use crate::json_events::{self, JsonOutput};
use crate::prepare::{prepare, Prepared};
use crate::render::EventRenderer;
use crate::signals::{self, StopSignal, StopSignals};
use crate::ExecArgs;
use anyhow::{Context, Result};
use std::process::ExitCode;
use std::time::Duration;
use troupe_actors::runtime::{Runtime, ThreadClient};
use troupe_actors::tool_orchestrator::registry::ToolRegistry;
use troupe_cli::output::{warn, StdoutError};
use troupe_config::file::HistoryToml;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, ReviewDecision, UserInput};
use troupe_messages::settings::SessionSettings;
use troupe_messages::threads::ThreadSummary;

/// Runs the task here; the exit code says whether the turn completed.
pub(crate) async fn run(mut args: ExecArgs) -> Result<ExitCode> {
    let prepared = prepare(&mut args).await?;
    let Prepared {
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
    } = prepared;
    // From here on a signal interrupts the turn instead of killing troupe on the spot.
    let mut signals = StopSignals::install().context("cannot catch SIGINT/SIGTERM/SIGHUP")?;
    let runtime = Runtime::start_with_store(ToolRegistry::with_builtin_tools(), store).await?;
    let mut thread = start(
        &runtime,
        &args,
        settings,
        target.as_ref(),
        &prompt,
        image_urls,
    )
    .await?;
    let shown_prompt = review.as_ref().map_or(&prompt, |r| &r.label).clone();
    let mut renderer: Box<dyn EventRenderer> = if args.json {
        Box::new(JsonOutput::default())
    } else {
        Box::new(HumanOutput::new(shown_prompt, args.color.enabled()))
    };
    if review.is_some() {
        renderer = Box::new(crate::review::ReviewRenderer::new(renderer));
    }
    let recorder = PromptRecorder {
        home: &home,
        history: &history,
        prompt: &prompt,
        enabled: !args.ephemeral,
    };
    let mut end = match drive(&mut thread, &mut signals, renderer.as_mut(), &recorder).await? {
        Driven::Ended(end) => end,
        Driven::GaveUp(code) => return Ok(code),
    };
    if let Some(code) = close(&mut thread, &runtime, &mut signals, end.stopped).await {
        return Ok(code);
    }
    if let (Some(review), true) = (&review, end.succeeded) {
        end.last_message = review.finish(end.last_message)?;
    }
    drop(ephemeral_dir);
    end.output_schema = output_schema;
    ending::finish(&args, end)
}

/// Opens (or resumes) the thread and sends the run's input: the goal, then the images and
/// the prompt.
async fn start(
    runtime: &Runtime,
    args: &ExecArgs,
    settings: SessionSettings,
    target: Option<&ThreadSummary>,
    prompt: &str,
    image_urls: Vec<String>,
) -> Result<ThreadClient> {
    let mut thread = match target {
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
        text: prompt.to_string(),
    });
    if let Some(objective) = args.goal.clone() {
        thread.submit(Op::CreateGoal {
            objective,
            token_budget: args.goal_budget,
        })?;
    }
    thread.submit(Op::UserInput { items })?;
    Ok(thread)
}

/// How [`drive`] ended: the turn is over (or was stopped), or troupe gave up waiting.
enum Driven {
    Ended(RunEnd),
    GaveUp(ExitCode),
}

/// The prompt, recorded in the history once the thread has its id (not for `--ephemeral`).
struct PromptRecorder<'a> {
    home: &'a std::path::Path,
    history: &'a HistoryToml,
    prompt: &'a str,
    enabled: bool,
}

impl PromptRecorder<'_> {
    fn record(&self, thread_id: &str) {
        if !self.enabled {
            return;
        }
        if let Err(err) =
            troupe_cli::history::record(self.home, self.history, thread_id, self.prompt)
        {
            warn(format!("the prompt history was not saved: {err:#}"));
        }
    }
}

/// Shows the thread's events until its turn (and a goal's follow-up turns) ends; a stop
/// signal or a failed stdout interrupts it, a second signal or an interrupt that takes too
/// long gives up.
async fn drive(
    thread: &mut ThreadClient,
    signals: &mut StopSignals,
    renderer: &mut dyn EventRenderer,
    recorder: &PromptRecorder<'_>,
) -> Result<Driven> {
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
                    return Ok(Driven::GaveUp(signals::give_up(first)));
                }
                stopped = Some(signal);
                warn(format!(
                    "{} received: interrupting the turn (send it again to stop at once)",
                    signal.name()
                ));
                interrupt(thread, &mut patience);
                continue;
            }
            () = sleep_until(patience) => {
                warn("the turn did not stop in time");
                return Ok(Driven::GaveUp(signals::give_up(stopped.unwrap_or(StopSignal::Interrupt))));
            }
        };
        let Some(event) = event else { break };
        if output_failed.is_none() {
            if let Err(err) = renderer.render(&event.msg) {
                // Nobody reads the events any more: stop the work, keep the thread sound.
                output_failed = Some(err);
                interrupt(thread, &mut patience);
            }
        }
        match event.msg {
            // Nobody can answer here: deny, say so, and tell the user how to avoid it.
            EventMsg::ExecApprovalRequest {
                call_id, command, ..
            } => {
                let what = format!("`{}`", json_events::command_line(&command));
                deny_approval(thread, call_id, &what)?;
            }
            EventMsg::ApplyPatchApprovalRequest { call_id, files, .. } => {
                let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                let what = format!("a patch to {}", names.join(", "));
                deny_approval(thread, call_id, &what)?;
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
                answer_questions(thread, call_id, &questions)?;
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
                recorder.record(&thread_id.to_string())
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
    Ok(Driven::Ended(RunEnd {
        last_message,
        succeeded,
        stopped,
        output_failed,
        output_schema: None,
    }))
}

/// Shuts the session down (its rollout flushed, its lock released) and ends whatever its
/// commands left running; `Some` when a signal made troupe give up meanwhile.
async fn close(
    thread: &mut ThreadClient,
    runtime: &Runtime,
    signals: &mut StopSignals,
    stopped: Option<StopSignal>,
) -> Option<ExitCode> {
    // Wait for the session to shut down: its rollout is flushed and its lock released.
    if thread.submit(Op::Shutdown).is_ok() {
        let drained = async { while thread.next_event().await.is_some() {} };
        tokio::select! {
            _ = tokio::time::timeout(Duration::from_secs(10), drained) => {}
            signal = signals.next() => {
                return Some(signals::give_up(stopped.unwrap_or(signal)));
            }
        }
    }
    runtime.stop();
    // Children never outlive troupe: whatever a command left running (a daemon) goes now.
    tokio::task::spawn_blocking(troupe_sandbox::descendants::kill_all_descendants)
        .await
        .ok();
    None
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
