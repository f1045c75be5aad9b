//! The session's side of a turn's life: starting it (with any context update, skill bodies
//! and the user's input recorded first), and what happens when it ends (the durable ending,
//! then the outer loop: queued input starts the next turn).

use super::context::budget;
use super::turn_ledger::TurnLedger;
use super::{context, EndingTurn, RunningTurn, SessionMsg, SessionState, TurnOutcome};
use crate::approvals::PendingApprovals;
use crate::hooks::TurnHooks;
use crate::turn::outbox::TurnOutbox;
use crate::turn::tokens::{auto_compact_limit, context_window, effective_limit};
use crate::turn::{prompt, TurnActor, TurnArgs, TurnMode, TurnStartHooks};
use ractor::{Actor, ActorRef};
use std::sync::Arc;
use troupe_checkpoint::index::Phase;
use troupe_messages::errors::{ModelError, TurnError};
use troupe_messages::events::{AbortReason, Event, EventMsg};
use troupe_messages::hooks::HookEventName;
use troupe_messages::ids::TurnId;
use troupe_messages::items::ResponseItem;
use troupe_messages::ops::UserInput;
use troupe_messages::policy::CollaborationMode;
use troupe_messages::rollout::{RolloutRecord, TurnContextRecord};
use troupe_messages::usage::TokenUsage;

impl SessionState {
    /// Copies a frontend's resolved settings for the next turns (`Op::UpdateTurnSettings`).
    pub(super) fn update_turn_settings(
        &mut self,
        update: troupe_messages::settings::TurnSettingsUpdate,
    ) {
        let mut settings = (*self.settings).clone();
        settings.model = update.model;
        settings.approval_policy = update.approval_policy;
        settings.sandbox_mode = update.sandbox_mode;
        settings.sandbox.writable_roots = update.writable_roots;
        settings.sandbox.network_access = update.network_access;
        settings.sandbox.exclude_tmpdir_env_var = update.exclude_tmpdir_env_var;
        settings.sandbox.exclude_slash_tmp = update.exclude_slash_tmp;
        settings.cwd = update.cwd;
        settings.context.reasoning_effort = update.reasoning_effort;
        self.settings = Arc::new(settings);
        self.next_turn_output_schema = update.output_schema_next_turn;
    }

    /// The settings of the turn starting now: the thread's, with the one-turn output schema
    /// a frontend set, if any (used up by this turn).
    fn turn_settings(&mut self) -> Arc<troupe_messages::settings::SessionSettings> {
        match self.next_turn_output_schema.take() {
            Some(schema) => {
                let mut settings = (*self.settings).clone();
                settings.context.output_schema = Some(schema);
                Arc::new(settings)
            }
            None => self.settings.clone(),
        }
    }

    /// `turn` is over after sending `sent` messages; its end waits in `ending`.
    pub(super) fn turn_over(
        &mut self,
        mut turn: RunningTurn,
        sent: u64,
        outcome: TurnOutcome,
        then_shutdown: Option<String>,
    ) {
        turn.ledger.ended_after(sent);
        self.ending = Some(EndingTurn {
            turn,
            outcome,
            then_shutdown,
            then_start: None,
        });
    }

    /// One message of turn `turn_id` was handled.
    pub(super) fn handled_turn_message(&mut self, turn_id: TurnId) {
        if let Some(turn) = self.turn.as_mut().filter(|t| t.id == turn_id) {
            turn.ledger.handled_one();
        } else if let Some(ending) = self.ending.as_mut().filter(|e| e.turn.id == turn_id) {
            ending.turn.ledger.handled_one();
        }
    }

    /// Records the end of the turn that is over once everything it sent has been handled;
    /// then a shutdown or the next turn asked for meanwhile.
    pub(super) async fn settle_ending(&mut self, myself: &ActorRef<SessionMsg>) {
        if !self
            .ending
            .as_ref()
            .is_some_and(|e| e.turn.ledger.settled())
        {
            return;
        }
        let Some(ending) = self.ending.take() else {
            return;
        };
        self.return_undelivered_queued_input();
        let EndingTurn {
            turn,
            outcome,
            then_shutdown,
            then_start,
        } = ending;
        let turn_id = turn.id;
        // The tree as the turn left it, durable before anyone hears the turn ended.
        if let Some(mut gate) = self
            .checkpoints
            .schedule(&self.settings, turn_id, Phase::After)
        {
            super::checkpoints::wait(&mut gate).await;
        }
        match outcome {
            TurnOutcome::Ended {
                last_agent_message,
                aborted,
            } => {
                if aborted.is_none() {
                    self.notify(turn_id, &turn.input_texts, last_agent_message.as_deref());
                }
                if aborted.is_none() {
                    let shutting_down = then_shutdown.is_some() || self.shutting_down;
                    self.goal_turn_completed(&turn.submission, shutting_down)
                        .await;
                }
                let msg = match aborted {
                    None => EventMsg::TurnComplete {
                        turn_id,
                        last_agent_message,
                        usage: turn.usage,
                    },
                    Some(reason) => EventMsg::TurnAborted { turn_id, reason },
                };
                self.emit(&turn.submission, msg).await;
                if then_shutdown.is_none() {
                    self.after_turn(myself, turn.submission).await;
                }
            }
            TurnOutcome::Stopped(reason) => {
                self.emit(&turn.submission, EventMsg::TurnAborted { turn_id, reason })
                    .await;
                if then_shutdown.is_none() {
                    // The index says how the turn ended (it said `running` until the next
                    // turn; a shutdown writes it itself).
                    self.flush().await;
                    self.persist.update_index(false);
                }
            }
        }
        if let Some(submission) = then_shutdown {
            self.finish_shutdown(myself, &submission).await;
        } else if let Some(submission) = then_start.filter(|_| self.turn.is_none()) {
            let inputs = self.queue.take_all();
            self.start_turn(myself, submission, inputs).await;
        }
    }

    /// Runs the `notify` program of a root thread's completed turn (not a sub-agent's).
    fn notify(&self, turn_id: TurnId, inputs: &[String], last_message: Option<&str>) {
        if self.settings.notify.is_empty() || self.settings.agents.depth > 0 {
            return;
        }
        let payload = super::notify::payload(
            self.thread_id,
            turn_id.0,
            &self.settings.cwd,
            inputs,
            last_message,
        );
        let env = crate::tool_orchestrator::shell_env::spawn_env(&self.settings);
        super::notify::spawn(&self.settings.notify, payload, &self.settings.cwd, &env);
    }

    /// Starts a turn; `inputs` empty means a compaction-only turn.
    #[allow(
        clippy::too_many_lines,
        reason = "a sequence of stages that read best in order; split when it grows"
    )]
    pub(super) async fn start_turn(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        submission: String,
        inputs: Vec<UserInput>,
    ) {
        // The user's shell command is running: its record joins the history first, then
        // this turn starts (the history must not change under a turn).
        if let Some(running) = self.user_shell.running.as_mut() {
            if !inputs.is_empty() {
                self.queue.push(inputs);
            }
            running.then_start = Some(submission);
            return;
        }
        self.turns_started += 1;
        self.goal_turn_started();
        let turn_id = TurnId(self.turns_started);
        let turn_context = RolloutRecord::TurnContext(TurnContextRecord {
            turn_id,
            settings: Box::new((*self.settings).clone()),
        });
        // Skills the user named as `$name` come with their body, before the request.
        let mut input_items = Vec::new();
        let input_texts: Vec<String> = if inputs.is_empty() {
            Vec::new()
        } else {
            vec![prompt::input_text(&inputs)]
        };
        if !inputs.is_empty() {
            let text = prompt::input_text(&inputs);
            let bodies: Vec<_> = context::skills::mentioned(&self.skills, &text)
                .into_iter()
                .map(context::skills::skill_body_message)
                .collect();
            for body in bodies {
                match body {
                    Ok((body, warning)) => {
                        input_items.push(ResponseItem::user_text(body));
                        if let Some(message) = warning {
                            self.emit(&submission, EventMsg::Warning { message }).await;
                        }
                    }
                    Err(message) => self.emit(&submission, EventMsg::Warning { message }).await,
                }
            }
            input_items.push(prompt::user_message(&inputs));
        }
        // Before anything joins the history: what can never fit is refused, nothing sent.
        if let Err(message) = self.check_fits(&input_items) {
            self.refuse_turn(submission, turn_id, turn_context, message)
                .await;
            return;
        }
        let mut records = vec![turn_context];
        for update in context::context_updates(&self.told_settings, &self.settings) {
            self.push_history(update.clone());
            records.push(RolloutRecord::ResponseItem(update));
        }
        self.told_settings = self.settings.clone();
        let hook_settings = &self.settings.hooks;
        let mut start_hooks = TurnStartHooks::default();
        if !inputs.is_empty() {
            start_hooks.session_start = self
                .session_start_pending
                .take()
                .filter(|_| hook_settings.has(HookEventName::SessionStart));
            if hook_settings.has(HookEventName::UserPromptSubmit) {
                start_hooks.prompt = Some(prompt::input_text(&inputs));
            }
        }
        // With hooks to run first, the input joins the history through the turn, once
        // they let it (a blocked prompt is never recorded nor sent).
        let hold_input = start_hooks.session_start.is_some() || start_hooks.prompt.is_some();
        let mode = if inputs.is_empty() {
            TurnMode::CompactOnly
        } else {
            // Checked before the new input joins: that input must survive compaction intact.
            let compact_first = self.tokens.over(auto_compact_limit(&self.settings));
            if hold_input {
                start_hooks.held_input = input_items;
            } else {
                for item in input_items {
                    self.push_history(item.clone());
                    records.push(RolloutRecord::ResponseItem(item));
                }
            }
            TurnMode::Regular { compact_first }
        };
        let started = EventMsg::TurnStarted { turn_id };
        records.push(RolloutRecord::Event(started.clone()));
        self.persist.record(records);
        // A boundary: the input is durable, and indexed, before anyone hears of the turn.
        self.flush().await;
        if self.persist.failure.is_some() {
            // Nothing the turn did could be recorded: it does not start.
            let aborted = EventMsg::TurnAborted {
                turn_id,
                reason: AbortReason::Failed,
            };
            self.emit(&submission, aborted).await;
            return;
        }
        self.persist.update_index(true);
        // Awaited (on a blocking thread, not this worker): indexed before anyone hears of it.
        self.persist.index_written().await;
        self.subscribers
            .send(Event {
                id: submission.clone(),
                msg: started,
            })
            .await;
        let outbox = TurnOutbox::new(myself.clone(), turn_id);
        let hooks = {
            let outbox = outbox.clone();
            Arc::new(TurnHooks::new(
                &self.settings,
                self.thread_id,
                turn_id,
                self.rollout_path.clone(),
                Arc::new(move |msg| outbox.event(msg)),
            ))
        };
        let pending_approvals = PendingApprovals::default();
        // Taken while the model is sampled; the turn's tools wait for it.
        let checkpoint_gate = self
            .checkpoints
            .schedule(&self.settings, turn_id, Phase::Before);
        let args = TurnArgs {
            checkpoint_gate,
            thread_id: self.thread_id,
            turn_id,
            outbox: outbox.clone(),
            session: myself.clone(),
            pending_approvals: pending_approvals.clone(),
            settings: self.turn_settings(),
            history: self.history.clone(),
            registry: self.registry.clone(),
            http: self.http.clone(),
            approvals: self.approvals.clone(),
            initial_context: self.initial_context.clone(),
            tokens: self.tokens.clone(),
            mode,
            hooks,
            start_hooks,
            command_budget: self
                .agents
                .as_ref()
                .map(|agents| agents.command_budget(&self.settings)),
        };
        match Actor::spawn_linked(None, TurnActor, args, myself.get_cell()).await {
            Ok((actor, _)) => {
                self.turn = Some(RunningTurn {
                    id: turn_id,
                    actor,
                    submission,
                    usage: TokenUsage::default(),
                    outbox,
                    ledger: TurnLedger::default(),
                    pending_approvals,
                    input_texts,
                });
            }
            Err(err) => {
                let error = TurnError::Internal {
                    message: format!("could not start the turn: {err}"),
                };
                self.fail_turn(&submission, turn_id, error).await;
            }
        }
    }

    /// Whether the fixed context, plus `input`, leaves room under the compaction limit.
    pub(super) fn check_fits(&self, input: &[ResponseItem]) -> Result<(), String> {
        let Some(limit) = effective_limit(&self.settings) else {
            return Ok(());
        };
        let room = budget::Room {
            limit,
            window: context_window(&self.settings),
        };
        let parts = budget::fixed_parts(&self.settings.base_instructions, &self.initial_context);
        budget::check_fixed(&parts, room)?;
        let fixed: u64 = parts.iter().map(|p| p.tokens).sum();
        budget::check_input(fixed, input, room)
    }

    /// Ends a turn before it started anything: recorded as started and failed, with the
    /// reason; its input is not kept (it could never be sent).
    /// A turn that cannot go on: a fatal error, then the turn's end as failed.
    async fn fail_turn(&mut self, submission: &str, turn_id: TurnId, error: TurnError) {
        self.emit(submission, EventMsg::Error { error, fatal: true })
            .await;
        self.emit(
            submission,
            EventMsg::TurnAborted {
                turn_id,
                reason: AbortReason::Failed,
            },
        )
        .await;
    }

    async fn refuse_turn(
        &mut self,
        submission: String,
        turn_id: TurnId,
        turn_context: RolloutRecord,
        message: String,
    ) {
        let started = EventMsg::TurnStarted { turn_id };
        self.persist
            .record(vec![turn_context, RolloutRecord::Event(started.clone())]);
        self.subscribers
            .send(Event {
                id: submission.clone(),
                msg: started,
            })
            .await;
        let error = TurnError::Model(ModelError::ContextWindowExceeded { message });
        self.fail_turn(&submission, turn_id, error).await;
        // Nothing can be queued: the refused turn took all the input there was.
        self.flush().await;
        self.persist.update_index(false);
    }

    /// After a turn: run what was typed meanwhile and not yet taken (outer loop). Plan mode
    /// starts no turn by itself: queued input waits for the user's next message.
    pub(super) async fn after_turn(&mut self, myself: &ActorRef<SessionMsg>, submission: String) {
        self.flush().await;
        self.persist.update_index(false);
        if !self.queue.is_empty()
            && self.settings.context.collaboration_mode != CollaborationMode::Plan
        {
            let inputs = self.queue.take_all();
            self.start_turn(myself, submission, inputs).await;
        } else if let Some(inputs) = self.take_goal_continuation() {
            // An active goal carries the thread on: a turn of its own (see `goals.rs`).
            self.start_turn(myself, submission, inputs).await;
        }
    }

    /// The running turn `turn_id` ended after sending `sent` messages: its end is recorded
    /// once they are all handled (`settle_ending`).
    pub(super) fn on_turn_ended(
        &mut self,
        turn_id: TurnId,
        last_agent_message: Option<String>,
        aborted: Option<AbortReason>,
        sent: u64,
    ) {
        // A turn the session stopped has its ending recorded already (or waiting).
        if self.turn.as_ref().map(|t| t.id) != Some(turn_id) {
            return;
        }
        let Some(turn) = self.turn.take() else {
            return;
        };
        let outcome = TurnOutcome::Ended {
            last_agent_message,
            aborted,
        };
        self.turn_over(turn, sent, outcome, None);
    }
}
