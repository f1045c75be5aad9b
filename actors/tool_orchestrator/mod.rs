//! ToolOrchestrator: runs the tool calls of one response and reports their outputs in order.
//!
//! Order per call: route → approval → choose the sandbox → attempt → escalated retry on a
//! sandbox denial (see `exec_flow`). Shared calls run together; an exclusive call waits for all
//! earlier calls and blocks later ones (a fair read/write gate taken in call order). Each call
//! runs in its own task, so a panicking handler becomes an error output, not a dead actor.

// The modules in layers, bottom first: a module names only modules of its own layer or of
// those under it, never one above (ARCHITECTURE.md, "The tool orchestrator in layers";
// `layers_tests.rs` fails on any import circle).
// The turn's shared state: PTY sessions, the turn's diff, the command's environment.
pub mod editor_files;
pub mod intercept;
pub mod services;
pub mod shell_env;
pub mod turn_diff;
pub mod unified_exec;
// The handler contract, then the registry that holds handlers by trait object.
pub mod contract;
pub mod registry;
// Policy: permissions, the approval gate, network approval, the command flow.
pub mod approval_gate;
pub mod exec_attempt;
pub mod exec_flow;
pub mod network_approval;
pub mod permissions;
pub mod sandbox_retry;
// The handlers (`tools::builtin()`).
pub mod tools;

use crate::approvals::{PendingApprovals, SessionApprovals};
use crate::sandbox_linux::{LinuxSandboxActor, LinuxSandboxArgs};
use crate::sandbox_none::NoneSandboxActor;
use contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use registry::ToolRegistry;
use services::TurnServices;
use std::sync::Arc;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::{SandboxMsg, SessionMsg, ToolOrchestratorMsg, TurnMsg};
use troupe_messages::policy::{SandboxBackendKind, SandboxMode};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::{ToolCall, ToolOutput, ToolSpec};
use troupe_sandbox::helper::HelperBackend;
use troupe_sandbox::probe;

/// Actor that runs tool batches for one turn.
pub struct ToolOrchestratorActor;

/// Startup arguments.
pub struct ToolOrchestratorArgs {
    pub turn: ActorRef<TurnMsg>,
    pub thread_id: ThreadId,
    pub session: ActorRef<SessionMsg>,
    pub command_budget: Option<Arc<tokio::sync::Semaphore>>,
    pub registry: Arc<ToolRegistry>,
    pub approvals: SessionApprovals,
    /// Resolved by the session when the user answers (one hop: no actor relays a decision).
    pub pending_approvals: PendingApprovals,
    /// The turn's shared state (PTY sessions, diff); the turn ends its sessions itself.
    pub services: Arc<TurnServices>,
}

pub struct ToolOrchestratorState {
    turn: ActorRef<TurnMsg>,
    thread_id: ThreadId,
    session: ActorRef<SessionMsg>,
    command_budget: Option<Arc<tokio::sync::Semaphore>>,
    registry: Arc<ToolRegistry>,
    sandbox: ActorRef<SandboxMsg>,
    /// The confining backend, started on the first batch that needs one (or why it cannot).
    confined: Option<Result<ActorRef<SandboxMsg>, String>>,
    approvals: SessionApprovals,
    pending: PendingApprovals,
    /// Cancels the running batch when the orchestrator stops (interrupt).
    cancel: CancellationToken,
    /// Lives as long as the turn: PTY sessions die with it.
    services: Arc<TurnServices>,
}

impl Actor for ToolOrchestratorActor {
    type Msg = ToolOrchestratorMsg;
    type State = ToolOrchestratorState;
    type Arguments = ToolOrchestratorArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: ToolOrchestratorArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let (sandbox, _) =
            Actor::spawn_linked(None, NoneSandboxActor, (), myself.get_cell()).await?;
        Ok(ToolOrchestratorState {
            turn: args.turn,
            thread_id: args.thread_id,
            session: args.session,
            command_budget: args.command_budget,
            registry: args.registry,
            sandbox,
            confined: None,
            approvals: args.approvals,
            pending: args.pending_approvals,
            cancel: CancellationToken::new(),
            services: args.services,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ToolOrchestratorMsg::RunBatch {
                calls,
                advertised,
                settings,
            } => {
                let confined = state.confined_backend(&myself, &settings).await;
                let batch = Batch {
                    calls,
                    advertised,
                    settings: Arc::new(*settings),
                    registry: state.registry.clone(),
                    sandbox: state.sandbox.clone(),
                    confined,
                    approvals: state.approvals.clone(),
                    pending: state.pending.clone(),
                    services: state.services.clone(),
                    thread_id: state.thread_id,
                    session: state.session.clone(),
                    command_budget: state.command_budget.clone(),
                };
                let cancel = state.cancel.clone();
                let turn = state.turn.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = cancel.cancelled() => {}
                        outputs = batch.run() => {
                            let _ = turn.send_message(TurnMsg::ToolsFinished { outputs });
                        }
                    }
                });
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
        if let SupervisionEvent::ActorFailed(who, reason) = event {
            // A backend died: restart the `none` one now; a confining one on the next batch.
            tracing::error!(%reason, "sandbox backend failed; restarting it");
            if who.get_id() == state.sandbox.get_id() {
                let (sandbox, _) =
                    Actor::spawn_linked(None, NoneSandboxActor, (), myself.get_cell()).await?;
                state.sandbox = sandbox;
            } else {
                state.confined = None;
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.cancel.cancel();
        state.services.shutdown().await;
        // Waiting here means that once the turn is gone, so are its processes.
        let grace = Some(std::time::Duration::from_secs(5));
        let _ = state
            .sandbox
            .stop_and_wait(Some("turn ended".into()), grace)
            .await;
        if let Some(Ok(confined)) = state.confined.take() {
            let _ = confined
                .stop_and_wait(Some("turn ended".into()), grace)
                .await;
        }
        Ok(())
    }
}

impl ToolOrchestratorState {
    /// The confining backend for these settings, spawned once; an error (fail closed) when
    /// this machine cannot confine commands. Not needed for danger-full-access.
    async fn confined_backend(
        &mut self,
        myself: &ActorRef<ToolOrchestratorMsg>,
        settings: &SessionSettings,
    ) -> Result<ActorRef<SandboxMsg>, String> {
        if settings.sandbox_mode == SandboxMode::DangerFullAccess {
            return Err("danger-full-access runs without a sandbox".into());
        }
        if let Some(existing) = &self.confined {
            return existing.clone();
        }
        let spawned = match (probe::choose(settings.sandbox.backend), probe::helper_exe()) {
            (Ok(backend), Ok(helper_exe)) => {
                // The weaker backend: the user hears what it does not protect, as an event
                // (the actors library never prints), whether it was a fallback or a choice.
                if backend == HelperBackend::Landlock {
                    let message = if settings.sandbox.backend == SandboxBackendKind::Auto {
                        probe::LANDLOCK_WARNING
                    } else {
                        probe::LANDLOCK_CHOSEN_WARNING
                    };
                    self.services.tell(EventMsg::Warning {
                        message: message.to_string(),
                    });
                }
                Actor::spawn_linked(
                    None,
                    LinuxSandboxActor,
                    LinuxSandboxArgs {
                        helper_exe,
                        backend,
                    },
                    myself.get_cell(),
                )
                .await
                .map(|(actor, _)| actor)
                .map_err(|e| format!("could not start the sandbox backend: {e}"))
            }
            (Err(why), _) | (_, Err(why)) => Err(why),
        };
        self.confined = Some(spawned.clone());
        spawned
    }
}

/// One response's tool calls with everything needed to run them.
struct Batch {
    calls: Vec<ToolCall>,
    advertised: Vec<ToolSpec>,
    settings: Arc<SessionSettings>,
    registry: Arc<ToolRegistry>,
    sandbox: ActorRef<SandboxMsg>,
    confined: Result<ActorRef<SandboxMsg>, String>,
    approvals: SessionApprovals,
    pending: PendingApprovals,
    services: Arc<TurnServices>,
    thread_id: ThreadId,
    session: ActorRef<SessionMsg>,
    command_budget: Option<Arc<tokio::sync::Semaphore>>,
}

impl Batch {
    async fn run(self) -> Vec<ToolOutput> {
        // Nothing a tool does may escape the turn's checkpoint.
        self.services.checkpoint_taken().await;
        let gate = Arc::new(RwLock::new(()));
        let mut tasks = Vec::with_capacity(self.calls.len());
        for call in &self.calls {
            let custom = call.is_custom();
            let Some(handler) = self.route(call) else {
                tasks.push((call.clone(), custom, None));
                continue;
            };
            // Taken here, in call order, so the gate's fairness gives call-order semantics.
            let guard: Box<dyn Send> = match handler.concurrency_for(call) {
                Concurrency::Shared => Box::new(gate.clone().read_owned().await),
                Concurrency::Exclusive => Box::new(gate.clone().write_owned().await),
            };
            let ctx = ToolContext {
                call: call.clone(),
                thread_id: self.thread_id,
                session: self.session.clone(),
                command_budget: self.command_budget.clone(),
                settings: self.settings.clone(),
                sandbox: self.sandbox.clone(),
                confined: self.confined.clone(),
                approvals: self.approvals.clone(),
                pending: self.pending.clone(),
                services: self.services.clone(),
                editor_files: self.registry.editor_files().cloned(),
            };
            // Aborted when dropped: an interrupted batch leaves no call running.
            let task = AbortOnDropHandle::new(tokio::spawn(async move {
                let outcome = run_with_hooks(handler, ctx).await;
                drop(guard);
                outcome
            }));
            tasks.push((call.clone(), custom, Some(task)));
        }
        let mut outputs = Vec::with_capacity(tasks.len());
        for (call, custom, task) in tasks {
            let outcome = match task {
                None => ToolOutcome::error(self.unknown_tool_message(&call)),
                Some(task) => match task.await {
                    Ok(outcome) => outcome,
                    Err(join_error) => self.crashed(&call, &panic_text(join_error)),
                },
            };
            outputs.push(ToolOutput {
                call_id: call.call_id,
                content: outcome.content,
                success: outcome.success,
                custom,
                parts: outcome.parts,
            });
        }
        outputs
    }

    /// The handler for a call, only if the tool was advertised in the request.
    fn route(&self, call: &ToolCall) -> Option<Arc<dyn ToolHandler>> {
        self.advertised
            .iter()
            .any(|spec| spec.name() == call.tool_name)
            .then(|| self.registry.get(&call.tool_name))
            .flatten()
    }

    fn unknown_tool_message(&self, call: &ToolCall) -> String {
        let names: Vec<&str> = self.advertised.iter().map(ToolSpec::name).collect();
        format!(
            "unsupported call: there is no tool named `{}`; available tools: {}",
            call.tool_name,
            names.join(", ")
        )
    }

    fn crashed(&self, call: &ToolCall, why: &str) -> ToolOutcome {
        let message = format!("tool `{}` crashed: {why}", call.tool_name);
        self.services.tell(EventMsg::Warning {
            message: message.clone(),
        });
        ToolOutcome::error(message)
    }
}

/// A call between its PreToolUse and PostToolUse hooks: a block before means it does not
/// run and the model reads the reason; a block after replaces the output with the feedback.
async fn run_with_hooks(handler: Arc<dyn ToolHandler>, mut ctx: ToolContext) -> ToolOutcome {
    let hooks = ctx.services.hooks.clone();
    let call = match hooks.pre_tool_use(&ctx.call).await {
        Ok(call) => call,
        Err(reason) => {
            return ToolOutcome::error(format!(
                "`{}` blocked by a PreToolUse hook: {reason}",
                ctx.call.tool_name
            ))
        }
    };
    // A hook's rewrite is what runs, and what every later check (approval, sandbox) sees.
    ctx.call = call.clone();
    let mut outcome = handler.handle(ctx).await;
    let effect = hooks.post_tool_use(&call, &outcome.content).await;
    if let Some(feedback) = effect.blocked {
        outcome = ToolOutcome::error(format!(
            "the output of `{}` was withheld by a PostToolUse hook: {feedback}",
            call.tool_name
        ));
    }
    for context in effect.context {
        outcome
            .content
            .push_str(&format!("\n\nPostToolUse hook context: {context}"));
    }
    outcome
}

fn panic_text(error: tokio::task::JoinError) -> String {
    if !error.is_panic() {
        return "the task was cancelled".into();
    }
    let payload = error.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(std::string::ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panicked".into())
}

#[cfg(test)]
#[path = "shell_env_tests.rs"]
mod shell_env_tests;

#[cfg(test)]
#[path = "layers_tests.rs"]
mod layers_tests;
