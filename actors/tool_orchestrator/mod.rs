//! ToolOrchestrator: runs the tool calls of one response and reports their outputs in order.
//!
//! Order per call (approvals and sandbox choice arrive with the approval issue): route → run
//! in the sandbox backend → output. Shared calls run together; an exclusive call waits for all
//! earlier calls and blocks later ones (a fair read/write gate taken in call order). Each call
//! runs in its own task, so a panicking handler becomes an error output, not a dead actor.

pub mod apply_patch;
pub mod apply_patch_tool;
pub mod intercept;
pub mod plan_tool;
pub mod registry;
pub mod services;
pub mod shell;
pub mod shell_env;
pub mod turn_diff;
pub mod unified_exec;

use crate::sandbox_none::NoneSandboxActor;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use registry::{Concurrency, ToolContext, ToolOutcome, ToolRegistry};
use services::TurnServices;
use std::sync::Arc;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;
use troupe_messages::events::EventMsg;
use troupe_messages::mailboxes::{SandboxMsg, ToolOrchestratorMsg, TurnMsg};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::{ToolCall, ToolOutput, ToolPayload, ToolSpec};

/// Actor that runs tool batches for one turn.
pub struct ToolOrchestratorActor;

/// Startup arguments.
pub struct ToolOrchestratorArgs {
    pub turn: ActorRef<TurnMsg>,
    pub registry: Arc<ToolRegistry>,
}

pub struct ToolOrchestratorState {
    turn: ActorRef<TurnMsg>,
    registry: Arc<ToolRegistry>,
    sandbox: ActorRef<SandboxMsg>,
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
            registry: args.registry,
            sandbox,
            cancel: CancellationToken::new(),
            services: Arc::new(TurnServices::default()),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ToolOrchestratorMsg::RunBatch {
                calls,
                advertised,
                settings,
            } => {
                let batch = Batch {
                    calls,
                    advertised,
                    settings: Arc::new(*settings),
                    registry: state.registry.clone(),
                    sandbox: state.sandbox.clone(),
                    turn: state.turn.clone(),
                    services: state.services.clone(),
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
        if let SupervisionEvent::ActorFailed(_, reason) = event {
            // The backend died: restart it so later calls have somewhere to run.
            tracing::error!(%reason, "sandbox backend failed; restarting it");
            let (sandbox, _) =
                Actor::spawn_linked(None, NoneSandboxActor, (), myself.get_cell()).await?;
            state.sandbox = sandbox;
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
        let _ = state
            .sandbox
            .stop_and_wait(
                Some("turn ended".into()),
                Some(std::time::Duration::from_secs(5)),
            )
            .await;
        Ok(())
    }
}

/// One response's tool calls with everything needed to run them.
struct Batch {
    calls: Vec<ToolCall>,
    advertised: Vec<ToolSpec>,
    settings: Arc<SessionSettings>,
    registry: Arc<ToolRegistry>,
    sandbox: ActorRef<SandboxMsg>,
    turn: ActorRef<TurnMsg>,
    services: Arc<TurnServices>,
}

impl Batch {
    async fn run(self) -> Vec<ToolOutput> {
        let gate = Arc::new(RwLock::new(()));
        let mut tasks = Vec::with_capacity(self.calls.len());
        for call in &self.calls {
            let custom = matches!(call.payload, ToolPayload::Custom { .. });
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
                settings: self.settings.clone(),
                sandbox: self.sandbox.clone(),
                turn: self.turn.clone(),
                services: self.services.clone(),
            };
            // Aborted when dropped: an interrupted batch leaves no call running.
            let task = AbortOnDropHandle::new(tokio::spawn(async move {
                let outcome = handler.handle(ctx).await;
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
            });
        }
        outputs
    }

    /// The handler for a call, only if the tool was advertised in the request.
    fn route(&self, call: &ToolCall) -> Option<Arc<dyn registry::ToolHandler>> {
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
        let _ = self
            .turn
            .send_message(TurnMsg::ToolEvent(EventMsg::Warning {
                message: message.clone(),
            }));
        ToolOutcome::error(message)
    }
}

fn panic_text(error: tokio::task::JoinError) -> String {
    if !error.is_panic() {
        return "the task was cancelled".into();
    }
    let payload = error.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panicked".into())
}

#[cfg(test)]
#[path = "shell_env_tests.rs"]
mod shell_env_tests;
#[cfg(test)]
#[path = "shell_tests.rs"]
mod shell_tests;
