//! The provider seam: one [`Wire`] per protocol (Responses, Chat Completions, Anthropic
//! Messages). A wire turns a [`ModelRequest`] into an HTTP request and decodes the provider's
//! stream into [`StreamEvent`]s; the retry loop, the bounds on a stream and the error
//! classification in `client.rs` are shared, so the rest of the runtime sees only response
//! items, deltas, usage and typed errors, whatever the provider speaks.

use super::sse::{BadEvent, StreamEvent};
use serde_json::Value;
use troupe_messages::sampling::ModelRequest;
use troupe_messages::settings::WireApi;

/// One wire protocol.
pub trait Wire: Send + Sync {
    /// Appended to the provider's `base_url`.
    fn path(&self) -> &'static str;
    /// The JSON body of a streaming request.
    fn body(&self, request: &ModelRequest) -> Value;
    /// Adds the credentials (and any protocol headers) to a request.
    fn authorize(&self, builder: reqwest::RequestBuilder, key: &str) -> reqwest::RequestBuilder {
        builder.bearer_auth(key)
    }
    /// Protocol headers sent with or without a key.
    fn headers(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        builder
    }
    /// A fresh decoder for one attempt at `request` (state never outlives the attempt, so a
    /// retry starts from nothing and nothing half-received survives).
    fn decoder(&self, request: &ModelRequest) -> Box<dyn WireDecoder>;
}

/// Decodes one attempt's stream, event by event.
pub trait WireDecoder: Send {
    /// One server-sent event: its `event:` name (may be empty) and its `data`.
    fn event(&mut self, name: &str, data: &str) -> Result<Vec<StreamEvent>, BadEvent>;
    /// The body ended cleanly; a wire whose stream may end without an explicit terminator
    /// completes here. Returning nothing means "closed before the response completed".
    fn end(&mut self) -> Vec<StreamEvent> {
        Vec::new()
    }
}

/// The wire a provider speaks.
pub fn wire_for(api: WireApi) -> Box<dyn Wire> {
    match api {
        WireApi::Responses => Box::new(super::responses::ResponsesWire),
        WireApi::Chat => Box::new(super::chat::ChatWire),
        WireApi::Anthropic => Box::new(super::anthropic::AnthropicWire),
    }
}

/// Whether an error payload's code says a retry may help (shared by the wires' in-stream
/// errors).
pub fn protocol_error(message: String) -> StreamEvent {
    StreamEvent::Failed {
        error: troupe_messages::errors::ModelError::ResponseFailed { message },
        retryable: true,
    }
}
