//! Turn: the inner loop of one turn — sample → run tool calls → sample again — until the model
//! answers without tool calls.
//!
//! The turn owns a copy of the history (the session's, plus what this turn adds) and reports
//! every new item up to the session. Input typed meanwhile arrives as `InjectInput` and joins
//! the history at the next sampling boundary. Stopping the turn actor is the interrupt: its
//! sampler and orchestrator stop with it, and they end their streams and processes.

pub mod compact;
mod hook_steps;
mod limits;
pub mod outbox;
pub mod prompt;
mod sampling;
pub mod tokens;

use crate::approvals::{PendingApprovals, SessionApprovals};
use crate::sampler::{SamplerActor, SamplerArgs};
use crate::tool_orchestrator::registry::ToolRegistry;
use crate::tool_orchestrator::services::TurnServices;
use crate::tool_orchestrator::{ToolOrchestratorActor, ToolOrchestratorArgs};
use outbox::TurnOutbox;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use std::sync::Arc;
use std::time::Duration;
use tokens::TokenTracker;
use troupe_messages::errors::{ModelError, TurnError};
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::{SamplerMsg, SessionMsg, ToolOrchestratorMsg, TurnMsg};
use troupe_messages::ops::UserInput;
use troupe_messages::sampling::ModelRequest;
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::ToolOutput;

/// Actor of one turn.
pub struct TurnActor;

/// Startup arguments.
pub struct TurnArgs {
    pub thread_id: ThreadId,
    pub turn_id: TurnId,
    /// Everything the turn's subtree tells the session goes through it (counted).
    pub outbox: TurnOutbox,
    /// The session itself: who is calling, for the collaboration tools (never sent to
    /// directly by the subtree; that goes through `outbox`).
    pub session: ActorRef<SessionMsg>,
    pub settings: Arc<SessionSettings>,
    /// The history so far, ending with this turn's user message.
    pub history: Vec<ResponseItem>,
    pub registry: Arc<ToolRegistry>,
    pub http: reqwest::Client,
    /// The session's approval cache and command rules.
    pub approvals: SessionApprovals,
    /// Where the session resolves this turn's approval requests (the user's decisions).
    pub pending_approvals: PendingApprovals,
    /// The thread's initial context (kept at the head of a compacted history).
    pub initial_context: Arc<Vec<ResponseItem>>,
    /// The session's token count for `history`.
    pub tokens: TokenTracker,
    pub mode: TurnMode,
    /// The turn's lifecycle hooks (tool hooks run through `TurnServices`).
    pub hooks: Arc<crate::hooks::TurnHooks>,
    /// SessionStart / UserPromptSubmit hooks to run before the first request.
    pub start_hooks: TurnStartHooks,
    /// The runtime's command budget, shared by every agent.
    pub command_budget: Option<Arc<tokio::sync::Semaphore>>,
    /// The checkpoint taken before this turn's first tool may run (none when off).
    pub checkpoint_gate: Option<crate::session::checkpoints::CheckpointGate>,
}

/// What the turn runs before its first request, when hooks are configured.
#[derive(Debug, Default)]
pub struct TurnStartHooks {
    /// SessionStart hooks, with their source (`startup`, `resume`).
    pub session_start: Option<&'static str>,
    /// The prompt for UserPromptSubmit hooks.
    pub prompt: Option<String>,
    /// The user's input, recorded by the turn once the hooks let it through.
    pub held_input: Vec<ResponseItem>,
}

/// What the turn's hook task is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HookStep {
    Start,
    Stop,
}

/// What a turn does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnMode {
    /// Sample until the model stops calling tools; compact first when over the limit.
    Regular { compact_first: bool },
    /// Only compact the history (`Op::Compact`).
    CompactOnly,
}

/// What the request in flight is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Sampling,
    /// Summarising; `then_sample` says whether the turn goes on afterwards.
    Compacting {
        then_sample: bool,
    },
}

/// What a turn was started with and never changes.
struct TurnSetup {
    thread_id: ThreadId,
    turn_id: TurnId,
    outbox: TurnOutbox,
    settings: Arc<SessionSettings>,
    registry: Arc<ToolRegistry>,
    /// The thread's initial context (kept at the head of a compacted history).
    initial_context: Arc<Vec<ResponseItem>>,
}

/// Where a turn is in its life; it only moves forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    /// Sampling, running tools, waiting for checkpoints.
    Running,
    /// Decided to end (`None`: finished normally) at the end of the message being handled;
    /// nothing more is handled.
    Ending(Option<AbortReason>),
    /// Told the session and stopping.
    Ended,
}

pub struct TurnState {
    setup: TurnSetup,
    /// The history so far: the session's at the start, plus what this turn added.
    history: Vec<ResponseItem>,
    mode: TurnMode,
    lifecycle: Lifecycle,
    sampler: ActorRef<SamplerMsg>,
    orchestrator: ActorRef<ToolOrchestratorMsg>,
    /// Injected input waiting for the next sampling boundary, with the session's numbers.
    injected: Vec<(u64, Vec<UserInput>)>,
    last_agent_message: Option<String>,
    /// The request in flight, kept so its tool calls run under the tool set that
    /// request advertised (a tool the model was not offered is refused).
    in_flight: Option<ModelRequest>,
    /// Calls handed to the orchestrator and not yet answered: (call id, custom?).
    running_calls: Vec<(String, bool)>,
    tokens: TokenTracker,
    phase: Phase,
    /// Settings of the request in flight (the mode may tighten the session's).
    step_settings: Arc<SessionSettings>,
    /// Shared with the orchestrator's calls; the turn ends the PTY sessions it holds.
    services: Arc<TurnServices>,
    /// Model requests sent by this turn (sampling and compaction), for the ceiling.
    requests_sent: u32,
    /// Automatic compactions run by this turn, for the cap.
    compactions: u32,
    /// A compaction ran since the last sampling request: the next step samples.
    compacted_since_sample: bool,
    hooks: Arc<crate::hooks::TurnHooks>,
    /// Start hooks not yet run (taken by `post_start`).
    start_hooks: Option<TurnStartHooks>,
    /// The hook task running (killed with its processes when the turn stops), and what for.
    hook_task: Option<(HookStep, tokio_util::task::AbortOnDropHandle<()>)>,
    /// Times Stop hooks sent this turn back to the model.
    stop_continuations: u32,
    /// Starting the MCP servers before the first request (aborted with the turn).
    mcp_start: Option<tokio_util::task::AbortOnDropHandle<()>>,
    /// The text the current sampling attempt has streamed so far (bounded by the provider's
    /// `stream_max_bytes`); kept in the history when the response is cut off.
    partial_text: String,
}

impl TurnState {
    fn tell_session(&self, msg: SessionMsg) {
        self.setup.outbox.send(msg);
    }

    fn event(&self, msg: EventMsg) {
        self.setup.outbox.event(msg);
    }

    fn record(&mut self, item: ResponseItem) {
        self.tokens.on_item(&item);
        self.history.push(item.clone());
        self.tell_session(SessionMsg::TurnItem {
            turn_id: self.setup.turn_id,
            item,
        });
    }

    /// Ends the turn; `finish` (at the end of the handler) does the rest.
    fn end(&mut self, aborted: Option<AbortReason>) {
        if self.lifecycle == Lifecycle::Running {
            self.lifecycle = Lifecycle::Ending(aborted);
        }
    }

    /// After `end`: kills the PTY sessions still running (each reports its `ExecCommandEnd`
    /// first), then tells the session the turn ended, and stops.
    async fn finish(&mut self, myself: &ActorRef<TurnMsg>) {
        let Lifecycle::Ending(aborted) = self.lifecycle else {
            return;
        };
        self.lifecycle = Lifecycle::Ended;
        let why = match aborted {
            None => "the turn ended",
            Some(AbortReason::Interrupted) => "the turn was interrupted",
            Some(AbortReason::Shutdown) => "the thread was shut down",
            Some(AbortReason::Failed) => "the turn failed",
        };
        self.services.exec.end_all(why).await;
        self.setup
            .outbox
            .end(self.last_agent_message.clone(), aborted);
        myself.stop(None);
    }

    fn fail(&mut self, error: ModelError) {
        self.event(EventMsg::Error {
            error: TurnError::Model(error),
            fatal: true,
        });
        self.end(Some(AbortReason::Failed));
    }

    /// Moves injected input into the history; tells the session which numbers were used.
    /// True when there was some.
    fn drain_injected(&mut self) -> bool {
        let injected = std::mem::take(&mut self.injected);
        let Some(last_seq) = injected.iter().map(|(seq, _)| *seq).max() else {
            return false;
        };
        for (_, inputs) in injected {
            self.record(prompt::user_message(&inputs));
            self.event(EventMsg::InputInjected {
                turn_id: self.setup.turn_id,
                text: prompt::input_text(&inputs),
            });
        }
        self.tell_session(SessionMsg::InputConsumed {
            turn_id: self.setup.turn_id,
            up_to_seq: last_seq,
        });
        true
    }

    /// Sends the next request — once everything it would carry is committed: injected input
    /// goes through a checkpoint first, like tool results.
    fn sample_next(&mut self) {
        if self.drain_injected() {
            self.tell_session(SessionMsg::TurnCheckpoint {
                turn_id: self.setup.turn_id,
            });
            return;
        }
        let mut tools = self.setup.registry.specs_for(&self.setup.settings);
        tools.extend(self.services.mcp_tools().specs());
        let (step_settings, tools) = prompt::for_mode(&self.setup.settings, tools);
        self.step_settings = Arc::new(step_settings);
        let overhead = tokens::request_overhead(&self.step_settings.base_instructions, &tools);
        if !self.fits_window(overhead) {
            return;
        }
        self.compacted_since_sample = false;
        let request = prompt::build_request(
            self.setup.thread_id,
            &self.step_settings,
            &self.history,
            tools,
        );
        self.in_flight = Some(request.clone());
        self.send_request(request);
    }
}

impl Actor for TurnActor {
    type Msg = TurnMsg;
    type State = TurnState;
    type Arguments = TurnArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: TurnArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let (sampler, _) = Actor::spawn_linked(
            None,
            SamplerActor,
            SamplerArgs {
                turn: myself.clone(),
                http: args.http.clone(),
                provider: args.settings.provider.clone(),
                auth_file: args
                    .settings
                    .troupe_home
                    .join(crate::sampler::auth::AUTH_FILE),
            },
            myself.get_cell(),
        )
        .await?;
        // Tool events go straight to the session, counted by the turn's outbox: they arrive
        // even while the turn stops, and before the turn's end.
        let services = Arc::new(TurnServices::new(
            args.outbox.event_sink(),
            args.settings.tool_output_max_bytes,
            args.hooks.clone(),
        ));
        if let Some(gate) = args.checkpoint_gate.clone() {
            services.set_checkpoint_gate(gate);
        }
        let (orchestrator, _) = Actor::spawn_linked(
            None,
            ToolOrchestratorActor,
            ToolOrchestratorArgs {
                turn: myself.clone(),
                thread_id: args.thread_id,
                session: args.session.clone(),
                command_budget: args.command_budget.clone(),
                registry: args.registry.clone(),
                approvals: args.approvals.clone(),
                pending_approvals: args.pending_approvals.clone(),
                services: services.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        Ok(TurnState {
            step_settings: args.settings.clone(),
            setup: TurnSetup {
                thread_id: args.thread_id,
                turn_id: args.turn_id,
                outbox: args.outbox,
                settings: args.settings,
                registry: args.registry,
                initial_context: args.initial_context,
            },
            history: args.history,
            mode: args.mode,
            lifecycle: Lifecycle::Running,
            tokens: args.tokens,
            phase: Phase::Sampling,
            sampler,
            orchestrator,
            injected: Vec::new(),
            last_agent_message: None,
            in_flight: None,
            running_calls: Vec::new(),
            services,
            requests_sent: 0,
            compactions: 0,
            compacted_since_sample: false,
            hooks: args.hooks,
            start_hooks: Some(args.start_hooks),
            hook_task: None,
            stop_continuations: 0,
            mcp_start: None,
            partial_text: String::new(),
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let settings = &state.setup.settings;
        let wants_mcp = state.mode != TurnMode::CompactOnly
            && settings.mcp_servers.values().any(|server| server.enabled);
        if !wants_mcp {
            if !state.run_start_hooks(&myself) {
                myself.send_message(TurnMsg::SampleNext)?;
            }
            return Ok(());
        }
        // The servers start (or are found running) in a task, within their startup
        // deadlines; the start hooks and the first request wait for their tools. Dropped
        // with the turn.
        let manager = state.setup.registry.mcp().clone();
        let servers = settings.mcp_servers.clone();
        let services = state.services.clone();
        state.mcp_start = Some(tokio_util::task::AbortOnDropHandle::new(tokio::spawn(
            async move {
                let prepared = manager.prepare(&servers).await;
                for message in prepared.warnings {
                    services.tell(EventMsg::Warning { message });
                }
                services.set_mcp_tools(prepared.toolset);
                let _ = myself.send_message(TurnMsg::McpReady);
            },
        )));
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if state.lifecycle != Lifecycle::Running {
            return Ok(());
        }
        match message {
            TurnMsg::SampleNext => match state.mode {
                TurnMode::CompactOnly => state.start_compaction(false),
                TurnMode::Regular {
                    compact_first: true,
                } => {
                    state.mode = TurnMode::Regular {
                        compact_first: false,
                    };
                    if state.may_compact_automatically() {
                        state.start_compaction(true);
                    }
                }
                TurnMode::Regular {
                    compact_first: false,
                } => state.sample_next(),
            },
            TurnMsg::InjectInput { seq, items } => state.injected.push((seq, items)),
            TurnMsg::Sampler(update) => state.on_sampler(update, &myself),
            TurnMsg::HooksRan { items, go_on } => state.on_hooks_ran(items, go_on),
            TurnMsg::McpReady => {
                state.mcp_start = None;
                if !state.run_start_hooks(&myself) {
                    myself.send_message(TurnMsg::SampleNext)?;
                }
            }
            TurnMsg::ToolsFinished { outputs } => {
                state.running_calls.clear();
                for output in &outputs {
                    state.record(prompt::output_item(output));
                }
                // Sample again only once the results are committed to the rollout, so
                // everything a request carries is on disk (resume sees what the model saw).
                state.tell_session(SessionMsg::TurnCheckpoint {
                    turn_id: state.setup.turn_id,
                });
            }
            TurnMsg::Checkpointed => {
                // Follow-up is needed: compact mid-turn when the next request would not fit,
                // at most once per sampling step (a compaction that left the history over the
                // limit is followed by a sample, not by another compaction).
                let over = state
                    .tokens
                    .over(tokens::auto_compact_limit(&state.setup.settings));
                if over && !state.compacted_since_sample {
                    if state.may_compact_automatically() {
                        state.start_compaction(true);
                    }
                } else {
                    state.sample_next();
                }
            }
        }
        state.finish(&myself).await;
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorFailed(who, reason) => {
                let role = if who.get_id() == state.sampler.get_id() {
                    "sampler"
                } else {
                    "tool orchestrator"
                };
                tracing::error!(%reason, role, "child of turn failed");
                state.fail(ModelError::Internal {
                    message: format!("the {role} crashed: {reason}"),
                });
                state.finish(&myself).await;
            }
            SupervisionEvent::ActorStarted(_)
            | SupervisionEvent::ActorTerminated(..)
            | SupervisionEvent::ProcessGroupChanged(_) => {}
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // A hook still running dies with the turn (its task's drop kills its processes).
        state.hook_task = None;
        // Stopped from outside (interrupt): every call the model made still gets an output,
        // or the next request would be rejected for a call without one.
        for (call_id, custom) in std::mem::take(&mut state.running_calls) {
            let output = ToolOutput {
                call_id,
                content: "aborted: the user interrupted this call before it finished".into(),
                success: false,
                custom,
                parts: Vec::new(),
            };
            state.record(prompt::output_item(&output));
        }
        let grace = Some(Duration::from_secs(5));
        state.sampler.stop(Some("turn ended".into()));
        let _ = state
            .orchestrator
            .stop_and_wait(Some("turn ended".into()), grace)
            .await;
        // The orchestrator ends the sessions in its `post_stop`; this covers one that died.
        state.services.shutdown().await;
        Ok(())
    }
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod compact_tests;
#[cfg(test)]
#[path = "prompt_tests.rs"]
mod prompt_tests;
#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tokens_tests;
