//! `troupe-mock-model`: a scripted mock of the OpenAI Responses API.
//!
//! Integration tests and benchmarks need a model endpoint that is fast,
//! deterministic and able to misbehave on purpose. [`MockModel`] serves
//! `POST …/responses` on 127.0.0.1 and answers each request with the next
//! scripted [`MockResponse`] (streamed SSE built from [`events`], HTTP errors,
//! broken or stalled streams, raw bytes), or, in [`Behaviour::Auto`] mode,
//! computes a tool-call / final-answer reply from the request itself.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use troupe_mock_model::{MockModel, MockResponse};
//! let mock = MockModel::start(vec![
//!     MockResponse::shell("call_1", &["echo", "hi"]),
//!     MockResponse::text("done"),
//! ])
//! .await?;
//! let url = mock.base_url(); // http://127.0.0.1:PORT/v1
//! # let _ = url; Ok(()) }
//! ```

pub mod auto;
pub mod events;
mod log;
pub mod multi_agent;
mod response;
mod server;
pub mod translate;
mod websocket;
mod wire;

pub use auto::{AutoConfig, ToolFlavor};
pub use response::{
    encode_event, error_body, split_text, Chunking, Endless, MockResponse, StreamEnd,
};
pub use server::{Behaviour, MockModel, MockOptions};
pub use wire::{RecordedRequest, MODELS};
