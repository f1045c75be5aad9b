//! Session: one thread. Owns the history, the input queue, the subscribers and the rollout
//! recorder; runs one turn at a time (the outer loop of B2).
//!
//! Ops arrive as `Submit`. User input starts a turn, or — while one runs — is numbered, handed
//! to the turn and kept until the turn confirms it reached the history; whatever the turn did
//! not take starts the next turn. Interrupt stops the turn actor (and with it the sampler, the
//! tool runs and their processes) and records the turn as aborted.

mod agent_ops;
pub mod checkpoints;
pub mod context;
mod goals;
pub mod inbox;
pub mod input_queue;
mod notify;
pub mod persist;
mod start;
pub mod subscribers;
pub mod turn_ledger;
mod turns;
mod user_shell;

use crate::approvals::{PendingApprovals, SessionApprovals};
use crate::rollout_recorder::loader::LoadedRollout;
use crate::rollout_recorder::writer::RolloutWriter;
use crate::thread_store::ThreadStore;
use crate::tool_orchestrator::registry::ToolRegistry;
use crate::turn::compact::apply_parts;
use crate::turn::outbox::TurnOutbox;
use crate::turn::tokens::TokenTracker;
use input_queue::InputQueue;
use persist::{persisted, Persistence};
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use subscribers::Subscribers;
use troupe_messages::errors::TurnError;
use troupe_messages::events::{AbortReason, Event, EventMsg};
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::{SessionMsg, ThreadManagerMsg, TurnMsg};
use troupe_messages::ops::{Op, ReviewDecision, Submission, UserInput};
use troupe_messages::rollout::{CompactedRecord, HistoryPart, RolloutRecord};
use troupe_messages::settings::{FsyncPolicy, SessionSettings};
use troupe_messages::usage::TokenUsage;
use turn_ledger::TurnLedger;

/// How long an interrupt waits for the turn subtree to be gone.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Actor of one thread.
pub struct SessionActor;

/// Startup arguments.
pub struct SessionArgs {
    pub thread_id: ThreadId,
    pub settings: SessionSettings,
    pub rollout_path: PathBuf,
    pub registry: Arc<ToolRegistry>,
    pub http: reqwest::Client,
    pub manager: Option<ActorRef<ThreadManagerMsg>>,
    /// Command rules, loaded (and checked) before the session starts.
    pub rules: Arc<troupe_rules::Rules>,
    /// A new thread, or one continued from its rollout.
    pub start: SessionStart,
    /// The thread index, when this process holds it.
    pub store: Option<Arc<ThreadStore>>,
    /// The runtime's shared rollout writer.
    pub rollout_writer: RolloutWriter,
    /// The runtime's agent tree: interrupting or closing this thread reaches its sub-agents.
    pub agents: Option<Arc<crate::agents::AgentTree>>,
}

/// The command rules of a thread: `$TROUPE_HOME/rules`, any folders the API caller named,
/// then the project rules files the user pinned — each only while its content still has the
/// pinned hash (a file changed since the config was read is not obeyed). Evaluated off the
/// runtime's workers, bounded (see `troupe_rules::load`).
pub async fn load_rules(
    settings: &SessionSettings,
) -> Result<Arc<troupe_rules::Rules>, troupe_rules::RulesError> {
    if settings.sandbox.ignore_rules {
        return Ok(Arc::new(troupe_rules::Rules::default()));
    }
    let mut dirs = vec![settings.troupe_home.join("rules")];
    dirs.extend(settings.sandbox.project_rules_dirs.iter().cloned());
    let mut rules = troupe_rules::Rules::load_dirs(&dirs).await?;
    let pinned = settings.sandbox.pinned_rules.clone();
    let pinned_rules = tokio::task::spawn_blocking(move || {
        let mut loaded = Vec::new();
        for (path, hash) in &pinned {
            let matches_pin =
                |text: &str| troupe_config::trust::sha256_hex(text.as_bytes()) == *hash;
            if let Some(file) = troupe_rules::load_file_if(path, matches_pin)? {
                loaded.extend(file.rules);
            }
        }
        Ok::<_, troupe_rules::RulesError>(loaded)
    })
    .await
    .map_err(|err| troupe_rules::RulesError::Unusable {
        path: settings.troupe_home.join("rules"),
        reason: format!("the pinned rules loader stopped: {err}"),
    })??;
    rules.rules.extend(pinned_rules);
    Ok(Arc::new(rules))
}

/// How a session begins.
pub enum SessionStart {
    /// A new thread: a new rollout at `rollout_path`.
    New,
    /// Continue the thread of this rollout (`rollout_path` is its path): history rebuilt,
    /// lines appended to the same file.
    Resume(Box<LoadedRollout>),
    /// A sub-agent: a new rollout linked to its parent, starting from the parent's history
    /// when forked.
    Agent(Box<troupe_messages::mailboxes::AgentStart>),
}

/// The turn that is running.
struct RunningTurn {
    id: TurnId,
    actor: ActorRef<TurnMsg>,
    /// The submission that started it; its events carry this id.
    submission: String,
    usage: TokenUsage,
    /// Counts what the turn's subtree sent; read when the session stops the turn.
    outbox: TurnOutbox,
    /// The turn's messages handled so far, against what it sent before its end.
    ledger: TurnLedger,
    /// The turn's calls waiting for the user; `Op::ExecApproval` resolves them here.
    pending_approvals: PendingApprovals,
    /// The text the user gave this turn (for `notify`).
    input_texts: Vec<String>,
}

/// How a turn that is over ended; recorded once its ledger is settled.
enum TurnOutcome {
    /// It ended by itself (`TurnEnded`), or failed.
    Ended {
        last_agent_message: Option<String>,
        aborted: Option<AbortReason>,
    },
    /// The session stopped it (interrupt, shutdown, a failed rollout, an abort decision).
    Stopped(AbortReason),
}

/// A turn that is over, waiting for the session to handle every message it sent first.
struct EndingTurn {
    turn: RunningTurn,
    outcome: TurnOutcome,
    /// A shutdown asked for meanwhile, by this submission: done once the end is recorded.
    then_shutdown: Option<String>,
    /// Input typed meanwhile, by this submission: starts a turn once the end is recorded.
    then_start: Option<String>,
}

pub struct SessionState {
    thread_id: ThreadId,
    settings: Arc<SessionSettings>,
    rollout_path: PathBuf,
    registry: Arc<ToolRegistry>,
    http: reqwest::Client,
    manager: Option<ActorRef<ThreadManagerMsg>>,
    persist: Persistence,
    history: Vec<ResponseItem>,
    subscribers: Subscribers,
    queue: InputQueue,
    turn: Option<RunningTurn>,
    /// The turn that is over and not yet recorded as such (see `turn_ledger`).
    ending: Option<EndingTurn>,
    turns_started: u64,
    total_usage: TokenUsage,
    /// "Approved for session" cache and command rules, shared with every turn.
    approvals: SessionApprovals,
    /// Told to every subscriber after `SessionConfigured` (unreadable AGENTS.md, …).
    startup_warnings: Vec<String>,
    /// The settings the model was last told about; a difference is appended as an update
    /// before the next turn's input, never by rewriting earlier items (the
    /// history stays a prefix of every later request, so the provider's prompt cache holds).
    told_settings: Arc<SessionSettings>,
    /// The initial context at the head of the history (kept by compaction).
    initial_context: Arc<Vec<ResponseItem>>,
    /// Tokens the next request will carry, for pre-turn compaction.
    tokens: TokenTracker,
    /// Skills listed in the initial context.
    skills: Vec<context::skills::Skill>,
    /// The runtime's agent tree (sub-agents of this thread).
    agents: Option<Arc<crate::agents::AgentTree>>,
    /// An `Op::Shutdown` is being carried out.
    shutting_down: bool,
    /// SessionStart hooks still to run, with their source (`startup`, `resume`): at the
    /// first turn of this process.
    session_start_pending: Option<&'static str>,
    /// Messages `troupe queue` left for this thread (see `inbox`).
    inbox: inbox::Inbox,
    /// The thread's goal and the follow-up turns it starts (`goals.rs`).
    goals: goals::GoalState,
    /// A frontend's JSON Schema for the next turn's final answer only.
    next_turn_output_schema: Option<serde_json::Value>,
    /// The work tree recorded around each turn (`checkpoints.rs`).
    checkpoints: checkpoints::SessionCheckpoints,
    /// The user's own shell command running now, if any (`user_shell.rs`).
    user_shell: user_shell::UserShell,
}

impl SessionState {
    fn configured_event(&self) -> EventMsg {
        EventMsg::SessionConfigured {
            thread_id: self.thread_id,
            model: self.settings.model.clone(),
            model_provider: self.settings.provider.id.clone(),
            cwd: self.settings.cwd.clone(),
            approval_policy: self.settings.approval_policy,
            sandbox_mode: self.settings.sandbox_mode,
            rollout_path: self.rollout_path.clone(),
        }
    }

    /// Records to the rollout; when the fsync policy wants them durable, waits for that.
    async fn record(&mut self, records: Vec<RolloutRecord>) {
        if self.persist.record(records) {
            self.flush().await;
        }
    }

    /// Sends an event to subscribers, after recording it (durably if it is a turn boundary)
    /// when it is worth replaying.
    async fn emit(&mut self, submission: &str, msg: EventMsg) {
        if persisted(&msg) {
            self.record(vec![RolloutRecord::Event(msg.clone())]).await;
        }
        self.subscribers
            .send(Event {
                id: submission.to_string(),
                msg,
            })
            .await;
    }

    fn turn_submission(&self) -> String {
        self.turn
            .as_ref()
            .map(|t| t.submission.clone())
            .unwrap_or_default()
    }

    /// Streaming deltas skip the rollout and the submission lookup: the hot path.
    async fn emit_delta(&mut self, msg: EventMsg) {
        let id = self
            .turn
            .as_ref()
            .map(|t| t.submission.clone())
            .unwrap_or_default();
        self.subscribers.send(Event { id, msg }).await;
    }

    /// Makes everything recorded durable; a failure stops the thread's work
    /// ([`Self::persistence_failed`]).
    async fn flush(&mut self) {
        if let Err(err) = self.persist.flush().await {
            self.persistence_failed(err).await;
        }
    }

    /// The rollout cannot be written: durability is the promise (a tool result is recorded
    /// before the model sees it), so nothing more may run. Told once, as a fatal error; the
    /// running turn is stopped at the end of the message being handled, and no new turn
    /// starts.
    async fn persistence_failed(&mut self, err: String) {
        tracing::error!(thread_id = %self.thread_id, %err, "rollout write failed");
        if self.persist.failure.is_some() {
            return;
        }
        self.persist.failure = Some(err.clone());
        let error = TurnError::Internal {
            message: format!("cannot save this thread, so it stops here: {err}"),
        };
        self.subscribers
            .send(Event {
                id: self.turn_submission(),
                msg: EventMsg::Error { error, fatal: true },
            })
            .await;
    }

    fn push_history(&mut self, item: ResponseItem) {
        self.tokens.on_item(&item);
        self.history.push(item);
    }

    /// Stops the running turn; its abort is recorded once every message its subtree sent
    /// before dying has been handled ([`Self::settle_ending`]). False when no turn was running.
    async fn interrupt(&mut self, reason: AbortReason) -> bool {
        // The cancellation tree: the turns of this thread's sub-agents stop too.
        if let Some(agents) = &self.agents {
            agents.interrupt_descendants(self.thread_id);
        }
        let Some(turn) = self.turn.take() else {
            return false;
        };
        let _ = turn
            .actor
            .stop_and_wait(Some("interrupted".into()), Some(STOP_GRACE))
            .await;
        // The subtree is gone: nothing it sends from now on belongs before the abort.
        let sent = turn.outbox.sent();
        let then_shutdown = (reason == AbortReason::Shutdown).then(|| turn.submission.clone());
        self.turn_over(turn, sent, TurnOutcome::Stopped(reason), then_shutdown);
        true
    }

    async fn finish_shutdown(&mut self, myself: &ActorRef<SessionMsg>, submission: &str) {
        self.flush().await;
        self.persist.update_index(false);
        if let Some(agents) = &self.agents {
            // A thread is closed once its sub-agents are: they record their own ending
            // first (bounded, they shut down in parallel), and their worktrees are retired.
            let worktrees = agents.worktrees_below(self.thread_id);
            let children: Vec<ractor::ActorCell> = agents
                .close_descendants(self.thread_id)
                .iter()
                .map(ractor::ActorRef::get_cell)
                .collect();
            let all_gone =
                futures::future::join_all(children.iter().map(|c| c.wait(Some(STOP_GRACE))));
            let _ = all_gone.await;
            for (task_path, slot) in &worktrees {
                crate::agents::watcher::retire_slot(slot, task_path).await;
            }
        }
        self.persist.index_written().await;
        self.emit(submission, EventMsg::ShutdownComplete).await;
        if let Some(manager) = &self.manager {
            let _ = manager.send_message(ThreadManagerMsg::ThreadStopped {
                thread_id: self.thread_id,
            });
        }
        myself.stop(Some("shutdown".into()));
    }

    /// Input the user typed: joins the running turn, waits for the turn that is ending or
    /// the user's shell command, or starts a turn.
    async fn on_user_input(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        submission_id: String,
        items: Vec<UserInput>,
    ) {
        match &self.turn {
            Some(turn) => {
                let actor = turn.actor.clone();
                // Typed while a turn runs: refused now if it can never fit, as it would
                // be at the start of a turn.
                let message = crate::turn::prompt::user_message(&items);
                if let Err(message) = self.check_fits(&[message]) {
                    let error = TurnError::Model(
                        troupe_messages::errors::ModelError::ContextWindowExceeded { message },
                    );
                    self.emit(
                        &submission_id,
                        EventMsg::Error {
                            error,
                            fatal: false,
                        },
                    )
                    .await;
                    return;
                }
                let seq = self.queue.push(items.clone());
                let _ = actor.send_message(TurnMsg::InjectInput { seq, items });
            }
            None => match self.ending.as_mut() {
                // The last turn's end is not recorded yet: this input's turn follows it.
                Some(ending) => {
                    self.queue.push(items);
                    ending.then_start = Some(submission_id);
                }
                // The user's shell command is running: its record joins the history
                // first, then this input's turn starts.
                None if self.user_shell.running.is_some() => {
                    self.queue.push(items);
                    if let Some(running) = self.user_shell.running.as_mut() {
                        running.then_start = Some(submission_id);
                    }
                }
                None => {
                    let mut inputs = self.queue.take_all();
                    inputs.extend(items);
                    self.start_turn(myself, submission_id, inputs).await;
                }
            },
        }
    }

    async fn on_submit(&mut self, myself: &ActorRef<SessionMsg>, submission: Submission) {
        match submission.op {
            Op::UserInput { items } => self.on_user_input(myself, submission.id, items).await,
            Op::AgentInput { items, start_turn } => {
                self.on_agent_input(myself, submission.id, items, start_turn)
                    .await
            }
            Op::AgentApproval {
                thread_id,
                call_id,
                decision,
            } => {
                self.on_agent_approval(&submission.id, thread_id, call_id, decision)
                    .await
            }
            Op::AgentUserInput { thread_id, items } => {
                self.on_agent_user_input(&submission.id, thread_id, items)
                    .await
            }
            Op::Interrupt => {
                if !self.interrupt(AbortReason::Interrupted).await {
                    self.user_shell.kill();
                }
            }
            Op::RunUserShellCommand {
                command,
                timeout_ms,
            } => {
                let timeout = timeout_ms.map(std::time::Duration::from_millis);
                self.on_user_shell_command(myself, submission.id, command, timeout)
                    .await
            }
            // A second shutdown (a sub-agent closed by its parent and by the root's close)
            // must not end the thread before the first one recorded the turn's abort.
            Op::Shutdown if self.shutting_down => {}
            Op::Shutdown => {
                self.shutting_down = true;
                self.user_shell.kill();
                if !self.interrupt(AbortReason::Shutdown).await {
                    match self.ending.as_mut() {
                        Some(ending) => ending.then_shutdown = Some(submission.id),
                        None => self.finish_shutdown(myself, &submission.id).await,
                    }
                }
            }
            Op::OverrideTurnContext {
                model,
                approval_policy,
                sandbox_mode,
                cwd,
                collaboration_mode,
            } => {
                let mut settings = (*self.settings).clone();
                settings.model = model.unwrap_or(settings.model);
                settings.approval_policy = approval_policy.unwrap_or(settings.approval_policy);
                settings.sandbox_mode = sandbox_mode.unwrap_or(settings.sandbox_mode);
                settings.cwd = cwd.unwrap_or(settings.cwd);
                settings.context.collaboration_mode =
                    collaboration_mode.unwrap_or(settings.context.collaboration_mode);
                self.settings = Arc::new(settings);
            }
            Op::UpdateTurnSettings { update } => self.update_turn_settings(*update),
            // One hop: the call's task awaits this decision; no actor relays it.
            Op::ExecApproval { call_id, decision } => match &self.turn {
                Some(turn) => {
                    let abort = decision == ReviewDecision::Abort;
                    if !turn.pending_approvals.resolve(&call_id, decision) {
                        let message =
                            format!("no approval is pending for call `{call_id}`; ignored");
                        self.emit(&submission.id, EventMsg::Warning { message })
                            .await;
                    } else if abort {
                        // "Abort" ends the turn as interrupted; every running call gets an
                        // output from the turn's stop.
                        self.interrupt(AbortReason::Interrupted).await;
                    }
                }
                None => {
                    let message = format!("no turn is running; approval for `{call_id}` ignored");
                    self.emit(&submission.id, EventMsg::Warning { message })
                        .await;
                }
            },
            Op::Compact => match &self.turn {
                None if self.ending.is_none() && self.user_shell.running.is_none() => {
                    self.start_turn(myself, submission.id, Vec::new()).await
                }
                _ => {
                    let message = "a turn is running; compact again when it has ended".to_string();
                    self.emit(&submission.id, EventMsg::Warning { message })
                        .await;
                }
            },
            Op::UserInputAnswer { call_id, answers } => {
                let answered = self
                    .turn
                    .as_ref()
                    .is_some_and(|turn| turn.pending_approvals.answer_question(&call_id, answers));
                if !answered {
                    let message = format!("no question is pending for call `{call_id}`; ignored");
                    self.emit(&submission.id, EventMsg::Warning { message })
                        .await;
                }
            }
            Op::CreateGoal {
                objective,
                token_budget,
            } => {
                let request = troupe_messages::goals::GoalRequest::Create {
                    objective,
                    token_budget,
                };
                if let Err(why) = self.on_goal_request(&submission.id, request).await {
                    let message = format!("the goal was not set: {why}");
                    self.emit(&submission.id, EventMsg::Warning { message })
                        .await;
                }
            }
        }
    }
}

/// How a compaction is recorded: by reference to the history it replaces, which replay
/// rebuilds exactly; in full for a format-1 rollout, or if the turn's history and ours ever
/// disagreed.
fn compacted_record(
    turn_id: TurnId,
    before: &[ResponseItem],
    after: &[ResponseItem],
    parts: Vec<HistoryPart>,
    by_reference: bool,
) -> CompactedRecord {
    match apply_parts(before, &parts) {
        Ok(rebuilt) if rebuilt == after && by_reference => CompactedRecord {
            turn_id,
            replacement_history: None,
            parts: Some(parts),
        },
        rebuilt => {
            if !rebuilt.is_ok_and(|rebuilt| rebuilt == after) {
                tracing::error!(%turn_id, "compaction parts do not rebuild the turn's history");
            }
            CompactedRecord {
                turn_id,
                replacement_history: Some(after.to_vec()),
                parts: None,
            }
        }
    }
}

impl Actor for SessionActor {
    type Msg = SessionMsg;
    type State = SessionState;
    type Arguments = SessionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: SessionArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        start::start(myself, args).await
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SessionMsg::Submit(submission) => state.on_submit(&myself, submission).await,
            SessionMsg::Subscribe { events } => {
                let configured = Event {
                    id: String::new(),
                    msg: state.configured_event(),
                };
                state.subscribers.add(events, configured).await;
                for message in state.startup_warnings.clone() {
                    state.emit("", EventMsg::Warning { message }).await;
                }
            }
            SessionMsg::AgentEvent(msg) => state.emit("", msg).await,
            SessionMsg::GetHistory { reply } => {
                let _ = reply.send(state.history.clone());
            }
            SessionMsg::TurnItem { turn_id, item } => {
                state.handled_turn_message(turn_id);
                state.push_history(item.clone());
                state
                    .record(vec![RolloutRecord::ResponseItem(item.clone())])
                    .await;
                let submission = state.turn_submission();
                state
                    .emit(&submission, EventMsg::ItemRecorded { item })
                    .await;
            }
            SessionMsg::TurnEvent { turn_id, msg } if msg.is_delta() => {
                state.handled_turn_message(turn_id);
                state.emit_delta(msg).await
            }
            SessionMsg::TurnEvent { turn_id, msg } => {
                state.handled_turn_message(turn_id);
                let msg = match msg {
                    EventMsg::TokenCount { last, .. } => {
                        state.tokens.on_usage(&last);
                        state.total_usage.add(&last);
                        state.goal_tokens(last.total_tokens);
                        if let Some(turn) = state.turn.as_mut().filter(|t| t.id == turn_id) {
                            turn.usage.add(&last);
                        }
                        EventMsg::TokenCount {
                            last,
                            total: state.total_usage,
                        }
                    }
                    other => other,
                };
                let submission = state.turn_submission();
                state.emit(&submission, msg).await;
            }
            SessionMsg::HistoryReplaced {
                turn_id,
                history,
                parts,
            } => {
                state.handled_turn_message(turn_id);
                // A format-1 rollout keeps format-1 lines, so older versions still read it.
                let by_reference = state.persist.format_version() >= 2;
                let record =
                    compacted_record(turn_id, &state.history, &history, parts, by_reference);
                state.tokens = TokenTracker::for_history(&history);
                state.history = history;
                state.record(vec![RolloutRecord::Compacted(record)]).await;
            }
            SessionMsg::TurnCheckpoint { turn_id } => {
                state.handled_turn_message(turn_id);
                if let Some(turn) = state.turn.as_ref().filter(|t| t.id == turn_id) {
                    let actor = turn.actor.clone();
                    if state.persist.policy != FsyncPolicy::TurnBoundaries {
                        state.flush().await;
                    }
                    // Not committed: the turn must not sample again (it is stopped below).
                    if state.persist.failure.is_none() {
                        let _ = actor.send_message(TurnMsg::Checkpointed);
                    }
                }
            }
            SessionMsg::RolloutFailed { error } => state.persistence_failed(error).await,
            SessionMsg::InputConsumed { turn_id, up_to_seq } => {
                state.handled_turn_message(turn_id);
                state.queue.consumed_up_to(up_to_seq);
                state.inbox.consumed_up_to(up_to_seq);
            }
            SessionMsg::TurnEnded {
                turn_id,
                last_agent_message,
                aborted,
                messages_before,
            } => state.on_turn_ended(turn_id, last_agent_message, aborted, messages_before),
            SessionMsg::QueuedInput { ops, claimed } => {
                state.on_queued_input(&myself, ops, claimed).await
            }
            SessionMsg::UserShellOutput { run, msg } => state.on_user_shell_output(run, msg).await,
            SessionMsg::UserShellEnded { run, end, record } => {
                state.on_user_shell_ended(&myself, run, end, record).await
            }
            SessionMsg::Goal { request, reply } => {
                let submission = state.turn_submission();
                let _ = reply.send(state.on_goal_request(&submission, request).await);
            }
        }
        // The rollout failed while handling this: no further tool call or request.
        if state.persist.failure.is_some() && state.turn.is_some() {
            state.interrupt(AbortReason::Failed).await;
        }
        state.settle_ending(&myself).await;
        state.inbox.turn_running(state.turn.is_some());
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let SupervisionEvent::ActorFailed(who, reason) = event else {
            return Ok(());
        };
        let failed_turn = state
            .turn
            .as_ref()
            .filter(|t| t.actor.get_id() == who.get_id())
            .map(|t| t.id);
        if let Some(turn_id) = failed_turn {
            let submission = state.turn_submission();
            let error = TurnError::Internal {
                message: format!("the turn crashed: {reason}"),
            };
            state
                .emit(&submission, EventMsg::Error { error, fatal: true })
                .await;
            let sent = state.turn.as_ref().map_or(0, |t| t.outbox.sent());
            state.on_turn_ended(turn_id, None, Some(AbortReason::Failed), sent);
        } else if who.get_id() == state.persist.recorder.get_id() {
            let message = format!("the rollout recorder failed: {reason}");
            state.persistence_failed(message).await;
            if state.turn.is_some() {
                state.interrupt(AbortReason::Failed).await;
            }
        }
        state.settle_ending(&myself).await;
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.user_shell.kill();
        // However this thread stops (shutdown, crash, runtime stop), its sub-agents close.
        if let Some(agents) = &state.agents {
            agents.close_descendants(state.thread_id);
        }
        if let Some(turn) = state.turn.take() {
            let _ = turn
                .actor
                .stop_and_wait(Some("session stopped".into()), Some(STOP_GRACE))
                .await;
        }
        let _ = state
            .persist
            .recorder
            .stop_and_wait(Some("session stopped".into()), Some(STOP_GRACE))
            .await;
        state.inbox.release().await;
        Ok(())
    }
}

#[cfg(test)]
#[path = "input_queue_tests.rs"]
mod input_queue_tests;
