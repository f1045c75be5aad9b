//! Sampler: serves one model request at a time for its turn.
//!
//! The stream runs in a task owned by the actor and tied to a cancellation token, so stopping
//! the sampler (interrupt) ends the HTTP stream at once. A panic in that task is reported to
//! the turn as a failed sample instead of taking anything down.

pub mod anthropic;
pub mod auth;
pub mod chat;
pub mod client;
pub mod history;
pub mod models;
pub mod replay;
pub mod responses;
pub mod retry;
pub mod sse;
pub mod websocket;
pub mod wire;

use std::path::PathBuf;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;
use troupe_messages::errors::ModelError;
use troupe_messages::mailboxes::{SamplerMsg, TurnMsg};
use troupe_messages::sampling::SamplerUpdate;
use troupe_messages::settings::ProviderSettings;

/// Actor that talks to the model provider.
pub struct SamplerActor;

/// Startup arguments.
pub struct SamplerArgs {
    pub turn: ActorRef<TurnMsg>,
    pub http: reqwest::Client,
    pub provider: ProviderSettings,
    /// `$TROUPE_HOME/auth.json`: keys stored by `troupe login` (the environment wins).
    pub auth_file: PathBuf,
}

pub struct SamplerState {
    args: SamplerArgs,
    /// The turn's WebSocket, when the provider speaks Responses over WebSocket.
    websocket: Option<std::sync::Arc<websocket::WsSlot>>,
    /// Cancels the request in flight.
    current: CancellationToken,
}

impl Actor for SamplerActor {
    type Msg = SamplerMsg;
    type State = SamplerState;
    type Arguments = SamplerArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: SamplerArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let websocket = (args.provider.supports_websockets && args.provider.replay.is_none())
            .then(Default::default);
        Ok(SamplerState {
            args,
            websocket,
            current: CancellationToken::new(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SamplerMsg::Sample(request) => {
                state.current.cancel();
                state.current = CancellationToken::new();
                let cancel = state.current.clone();
                let turn = state.args.turn.clone();
                let http = state.args.http.clone();
                let provider = state.args.provider.clone();
                let auth_file = state.args.auth_file.clone();
                let websocket = state.websocket.clone();
                tokio::spawn(async move {
                    let updates = turn.clone();
                    let work = AbortOnDropHandle::new(tokio::spawn(async move {
                        let send = |update| {
                            let _ = updates.send_message(TurnMsg::Sampler(update));
                        };
                        match &provider.replay {
                            Some(source) => replay::sample(source, &request, send),
                            None => {
                                client::sample(
                                    &http,
                                    &provider,
                                    &auth_file,
                                    websocket.as_deref(),
                                    &request,
                                    send,
                                )
                                .await
                            }
                        }
                    }));
                    tokio::select! {
                        _ = cancel.cancelled() => {}
                        result = work => {
                            if let Err(err) = result {
                                if err.is_panic() {
                                    let _ = turn.send_message(TurnMsg::Sampler(SamplerUpdate::Failed {
                                        error: ModelError::Internal { message: "the sampler crashed".into() },
                                    }));
                                }
                            }
                        }
                    }
                });
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.current.cancel();
        Ok(())
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod sse_tests;
