//! Session: one thread. Owns the history, the input queue, the subscribers and the rollout
//! recorder; runs one turn at a time (the outer loop of B2).
//!
//! Ops arrive as `Submit`. User input starts a turn, or — while one runs — is numbered, handed
//! to the turn and kept until the turn confirms it reached the history; whatever the turn did
//! not take starts the next turn. Interrupt stops the turn actor (and with it the sampler, the
//! tool runs and their processes) and records the turn as aborted.

pub mod context;
pub mod input_queue;
pub mod subscribers;

use crate::rollout_recorder::{path::now_rfc3339, RolloutArgs, RolloutRecorderActor};
use crate::tool_orchestrator::registry::ToolRegistry;
use crate::turn::tokens::{auto_compact_limit, TokenTracker};
use crate::turn::{prompt, TurnActor, TurnArgs, TurnMode};
use input_queue::InputQueue;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use subscribers::Subscribers;
use troupe_messages::errors::TurnError;
use troupe_messages::events::{AbortReason, Event, EventMsg};
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::{RolloutMsg, SessionMsg, ThreadManagerMsg, TurnMsg};
use troupe_messages::ops::{Op, Submission, UserInput};
use troupe_messages::rollout::{
    CompactedRecord, RolloutLine, RolloutRecord, SessionMeta, TurnContextRecord,
};
use troupe_messages::settings::SessionSettings;
use troupe_messages::usage::TokenUsage;

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
}

/// The turn that is running.
struct RunningTurn {
    id: TurnId,
    actor: ActorRef<TurnMsg>,
    /// The submission that started it; its events carry this id.
    submission: String,
    usage: TokenUsage,
}

pub struct SessionState {
    thread_id: ThreadId,
    settings: Arc<SessionSettings>,
    rollout_path: PathBuf,
    registry: Arc<ToolRegistry>,
    http: reqwest::Client,
    manager: Option<ActorRef<ThreadManagerMsg>>,
    recorder: ActorRef<RolloutMsg>,
    history: Vec<ResponseItem>,
    subscribers: Subscribers,
    queue: InputQueue,
    turn: Option<RunningTurn>,
    turns_started: u64,
    total_usage: TokenUsage,
    /// Told to every subscriber after `SessionConfigured` (unreadable AGENTS.md, …).
    startup_warnings: Vec<String>,
    /// The settings the model was last told about; a difference is appended as an update
    /// before the next turn's input, never by rewriting earlier items (B16).
    told_settings: Arc<SessionSettings>,
    /// The initial context at the head of the history (kept by compaction).
    initial_context: Arc<Vec<ResponseItem>>,
    /// Tokens the next request will carry, for pre-turn compaction.
    tokens: TokenTracker,
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

    fn record(&self, records: Vec<RolloutRecord>) {
        let timestamp = now_rfc3339();
        let lines = records
            .into_iter()
            .map(|record| RolloutLine {
                timestamp: timestamp.clone(),
                record,
            })
            .collect();
        let _ = self.recorder.send_message(RolloutMsg::Append(lines));
    }

    /// Sends an event to subscribers, and to the rollout when it is worth replaying.
    async fn emit(&mut self, submission: &str, msg: EventMsg) {
        if persisted(&msg) {
            self.record(vec![RolloutRecord::Event(msg.clone())]);
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

    async fn flush(&self) {
        let flushed = self
            .recorder
            .call(|reply| RolloutMsg::Flush { reply }, Some(STOP_GRACE))
            .await;
        if !matches!(flushed, Ok(ractor::rpc::CallResult::Success(Ok(())))) {
            tracing::error!(thread_id = %self.thread_id, "rollout flush failed");
        }
    }

    fn push_history(&mut self, item: ResponseItem) {
        self.tokens.on_item(&item);
        self.history.push(item);
    }

    /// Starts a turn; `inputs` empty means a compaction-only turn.
    async fn start_turn(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        submission: String,
        inputs: Vec<UserInput>,
    ) {
        self.turns_started += 1;
        let turn_id = TurnId(self.turns_started);
        let mut records = vec![RolloutRecord::TurnContext(TurnContextRecord {
            turn_id,
            settings: Box::new((*self.settings).clone()),
        })];
        if let Some(update) = context::context_update(&self.told_settings, &self.settings) {
            self.push_history(update.clone());
            records.push(RolloutRecord::ResponseItem(update));
            self.told_settings = self.settings.clone();
        }
        let mode = if inputs.is_empty() {
            TurnMode::CompactOnly
        } else {
            // Checked before the new input joins: that input must survive compaction intact.
            let compact_first = self.tokens.over(auto_compact_limit(&self.settings));
            let user = prompt::user_message(&inputs);
            self.push_history(user.clone());
            records.push(RolloutRecord::ResponseItem(user));
            TurnMode::Regular { compact_first }
        };
        self.record(records);
        self.emit(&submission, EventMsg::TurnStarted { turn_id })
            .await;
        let args = TurnArgs {
            thread_id: self.thread_id,
            turn_id,
            session: myself.clone(),
            settings: self.settings.clone(),
            history: self.history.clone(),
            registry: self.registry.clone(),
            http: self.http.clone(),
            initial_context: self.initial_context.clone(),
            tokens: self.tokens.clone(),
            mode,
        };
        match Actor::spawn_linked(None, TurnActor, args, myself.get_cell()).await {
            Ok((actor, _)) => {
                self.turn = Some(RunningTurn {
                    id: turn_id,
                    actor,
                    submission,
                    usage: TokenUsage::default(),
                });
            }
            Err(err) => {
                let error = TurnError::Internal {
                    message: format!("could not start the turn: {err}"),
                };
                self.emit(&submission, EventMsg::Error { error, fatal: true })
                    .await;
                self.emit(
                    &submission,
                    EventMsg::TurnAborted {
                        turn_id,
                        reason: AbortReason::Failed,
                    },
                )
                .await;
            }
        }
    }

    /// After a turn: run what was typed meanwhile and not yet taken (outer loop).
    async fn after_turn(&mut self, myself: &ActorRef<SessionMsg>, submission: String) {
        if !self.queue.is_empty() {
            let inputs = self.queue.take_all();
            self.start_turn(myself, submission, inputs).await;
        }
    }

    /// Stops the running turn; `TurnStopped` (sent to ourselves) records the abort once every
    /// item the turn sent before dying has been handled. False when no turn was running.
    async fn interrupt(&mut self, myself: &ActorRef<SessionMsg>, reason: AbortReason) -> bool {
        let Some(turn) = self.turn.take() else {
            return false;
        };
        let _ = turn
            .actor
            .stop_and_wait(Some("interrupted".into()), Some(STOP_GRACE))
            .await;
        let _ = myself.send_message(SessionMsg::TurnStopped {
            turn_id: turn.id,
            submission: turn.submission,
            reason,
        });
        true
    }

    async fn finish_shutdown(&mut self, myself: &ActorRef<SessionMsg>, submission: &str) {
        self.emit_durably(submission, EventMsg::ShutdownComplete)
            .await;
        if let Some(manager) = &self.manager {
            let _ = manager.send_message(ThreadManagerMsg::ThreadStopped {
                thread_id: self.thread_id,
            });
        }
        myself.stop(Some("shutdown".into()));
    }

    async fn on_submit(&mut self, myself: &ActorRef<SessionMsg>, submission: Submission) {
        match submission.op {
            Op::UserInput { items } => match &self.turn {
                Some(turn) => {
                    let seq = self.queue.push(items.clone());
                    let _ = turn.actor.send_message(TurnMsg::InjectInput { seq, items });
                }
                None => {
                    let mut inputs = self.queue.take_all();
                    inputs.extend(items);
                    self.start_turn(myself, submission.id, inputs).await;
                }
            },
            Op::Interrupt => {
                self.interrupt(myself, AbortReason::Interrupted).await;
            }
            Op::Shutdown => {
                if !self.interrupt(myself, AbortReason::Shutdown).await {
                    self.finish_shutdown(myself, &submission.id).await;
                }
            }
            Op::OverrideTurnContext {
                model,
                approval_policy,
                sandbox_mode,
                cwd,
            } => {
                let mut settings = (*self.settings).clone();
                settings.model = model.unwrap_or(settings.model);
                settings.approval_policy = approval_policy.unwrap_or(settings.approval_policy);
                settings.sandbox_mode = sandbox_mode.unwrap_or(settings.sandbox_mode);
                settings.cwd = cwd.unwrap_or(settings.cwd);
                self.settings = Arc::new(settings);
            }
            Op::Compact => match &self.turn {
                None => self.start_turn(myself, submission.id, Vec::new()).await,
                Some(_) => {
                    let message = "a turn is running; compact again when it has ended".to_string();
                    self.emit(&submission.id, EventMsg::Warning { message })
                        .await;
                }
            },
            Op::ExecApproval { .. } => {
                let message = "this operation is not supported yet by this build".to_string();
                self.emit(&submission.id, EventMsg::Warning { message })
                    .await;
            }
            _ => {
                let message = "unknown operation".to_string();
                self.emit(&submission.id, EventMsg::Warning { message })
                    .await;
            }
        }
    }

    async fn on_turn_ended(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        turn_id: TurnId,
        last_agent_message: Option<String>,
        aborted: Option<AbortReason>,
    ) {
        // A turn that was interrupted already had its ending recorded.
        if self.turn.as_ref().map(|t| t.id) != Some(turn_id) {
            return;
        }
        let Some(turn) = self.turn.take() else {
            return;
        };
        let msg = match aborted {
            None => EventMsg::TurnComplete {
                turn_id,
                last_agent_message,
                usage: turn.usage,
            },
            Some(reason) => EventMsg::TurnAborted { turn_id, reason },
        };
        self.emit_durably(&turn.submission, msg).await;
        self.after_turn(myself, turn.submission).await;
    }

    /// Records `msg`, fsyncs the rollout, and only then tells subscribers: a client that
    /// sees a turn end can exit at once without losing the turn.
    async fn emit_durably(&mut self, submission: &str, msg: EventMsg) {
        self.record(vec![RolloutRecord::Event(msg.clone())]);
        self.flush().await;
        self.subscribers
            .send(Event {
                id: submission.to_string(),
                msg,
            })
            .await;
    }
}

/// Events that go to the rollout (deltas do not: the finished items carry the same text).
fn persisted(msg: &EventMsg) -> bool {
    !matches!(
        msg,
        EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::SessionConfigured { .. }
            | EventMsg::ExecCommandBegin { .. }
    )
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
        let meta = SessionMeta {
            version: troupe_messages::PROTOCOL_VERSION,
            thread_id: args.thread_id,
            parent_thread_id: None,
            cwd: args.settings.cwd.clone(),
            model: args.settings.model.clone(),
            model_provider: args.settings.provider.id.clone(),
            cli_version: env!("CARGO_PKG_VERSION").to_string(),
            created_at: now_rfc3339(),
        };
        let (recorder, _) = Actor::spawn_linked(
            None,
            RolloutRecorderActor,
            RolloutArgs {
                path: args.rollout_path.clone(),
                meta,
            },
            myself.get_cell(),
        )
        .await?;
        let initial = context::initial_context(&args.settings);
        let _ = recorder.send_message(RolloutMsg::Append(
            initial
                .items
                .iter()
                .map(|item| RolloutLine {
                    timestamp: now_rfc3339(),
                    record: RolloutRecord::ResponseItem(item.clone()),
                })
                .collect(),
        ));
        let settings = Arc::new(args.settings);
        let tokens = TokenTracker::for_history(&initial.items);
        Ok(SessionState {
            initial_context: Arc::new(initial.items.clone()),
            tokens,
            thread_id: args.thread_id,
            told_settings: settings.clone(),
            settings,
            rollout_path: args.rollout_path,
            registry: args.registry,
            http: args.http,
            manager: args.manager,
            recorder,
            history: initial.items,
            subscribers: Subscribers::default(),
            queue: InputQueue::default(),
            turn: None,
            turns_started: 0,
            total_usage: TokenUsage::default(),
            startup_warnings: initial.warnings,
        })
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
            SessionMsg::GetHistory { reply } => {
                let _ = reply.send(state.history.clone());
            }
            SessionMsg::TurnItem { item, .. } => {
                state.push_history(item.clone());
                state.record(vec![RolloutRecord::ResponseItem(item.clone())]);
                let submission = state.turn_submission();
                state
                    .emit(&submission, EventMsg::ItemRecorded { item })
                    .await;
            }
            SessionMsg::TurnEvent { turn_id, msg } => {
                let msg = match msg {
                    EventMsg::TokenCount { last, .. } => {
                        state.tokens.on_usage(&last);
                        state.total_usage.add(&last);
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
            SessionMsg::HistoryReplaced { turn_id, history } => {
                state.tokens = TokenTracker::for_history(&history);
                state.history = history.clone();
                state.record(vec![RolloutRecord::Compacted(CompactedRecord {
                    turn_id,
                    replacement_history: history,
                })]);
            }
            SessionMsg::InputConsumed { up_to_seq, .. } => state.queue.consumed_up_to(up_to_seq),
            SessionMsg::TurnStopped {
                turn_id,
                submission,
                reason,
            } => {
                state
                    .emit_durably(&submission, EventMsg::TurnAborted { turn_id, reason })
                    .await;
                if reason == AbortReason::Shutdown {
                    state.finish_shutdown(&myself, &submission).await;
                }
            }
            SessionMsg::TurnEnded {
                turn_id,
                last_agent_message,
                aborted,
            } => {
                state
                    .on_turn_ended(&myself, turn_id, last_agent_message, aborted)
                    .await
            }
        }
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
            state
                .on_turn_ended(&myself, turn_id, None, Some(AbortReason::Failed))
                .await;
        } else if who.get_id() == state.recorder.get_id() {
            let message =
                format!("the rollout recorder failed; this thread is no longer saved: {reason}");
            tracing::error!(%message);
            state.emit("", EventMsg::Warning { message }).await;
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(turn) = state.turn.take() {
            let _ = turn
                .actor
                .stop_and_wait(Some("session stopped".into()), Some(STOP_GRACE))
                .await;
        }
        let _ = state
            .recorder
            .stop_and_wait(Some("session stopped".into()), Some(STOP_GRACE))
            .await;
        Ok(())
    }
}

#[cfg(test)]
#[path = "input_queue_tests.rs"]
mod input_queue_tests;
