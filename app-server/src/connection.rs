//! One client connection, whatever the transport: frames in, lines out through a bounded
//! queue. Requests run concurrently (bounded per connection); `initialize` comes first.

use crate::hub::Hub;
use crate::live::{ClientSink, Control, LagBoard};
use crate::methods::{self, Reply};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, Semaphore};
use troupe_app_server_protocol::jsonrpc::{self, FrameError, Incoming, Line};
use troupe_app_server_protocol::protocol::{
    ApprovalResponse, InitializeParams, InitializeResponse,
};

/// Lines a client may have queued before it counts as lagging.
pub const OUTBOUND_CAPACITY: usize = 4096;
/// Requests of one connection handled at once; more wait (the reader stops reading).
const MAX_IN_FLIGHT: usize = 64;
/// The longest frame accepted; longer ones are refused (and skipped).
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// What a transport hands the connection.
#[derive(Debug)]
pub enum InFrame {
    Line(Vec<u8>),
    /// A frame longer than `MAX_FRAME_BYTES` was skipped.
    TooLong,
}

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

/// A new connection's outbound side: the transport's writer drains `lines`, and after each
/// line sends `lag.take_notices()`.
pub struct Outbound {
    pub lines: mpsc::Receiver<Line>,
    pub lag: Arc<LagBoard>,
}

/// Creates a connection's queue.
pub fn open() -> (ClientSink, Outbound) {
    let (tx, rx) = mpsc::channel(OUTBOUND_CAPACITY);
    let lag = Arc::new(LagBoard::default());
    let sink = ClientSink {
        conn: NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
        tx,
        lag: lag.clone(),
    };
    (sink, Outbound { lines: rx, lag })
}

/// Reads frames until the transport closes, then drops this client from every thread.
pub async fn run(hub: Arc<Hub>, sink: ClientSink, mut frames: mpsc::Receiver<InFrame>) {
    let mut initialized = false;
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    while let Some(frame) = frames.recv().await {
        let line = match frame {
            InFrame::Line(line) => line,
            InFrame::TooLong => {
                let message = format!(
                    "Invalid request: message longer than {MAX_FRAME_BYTES} bytes was discarded"
                );
                send(&sink, jsonrpc::error(&Value::Null, message)).await;
                continue;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match jsonrpc::parse(&line) {
            Err(FrameError::NotJson(err)) => {
                // Codex answers nothing here (there is no id); the log says why.
                tracing::warn!(%err, "ignored a frame that is not JSON");
            }
            Err(FrameError::Invalid { id, message }) => {
                send(&sink, jsonrpc::error(&id, message)).await
            }
            Ok(Incoming::Notification { method }) => {
                if method != "initialized" {
                    tracing::warn!(%method, "ignored an unknown client notification");
                }
            }
            Ok(Incoming::Response { id, result }) => answer(&hub, &sink, id, result).await,
            Ok(Incoming::Request { id, method, params }) => {
                if method == "initialize" && !initialized {
                    let reply = initialize(&hub, params);
                    initialized = reply.is_ok();
                    send(&sink, reply_line(&id, reply)).await;
                    continue;
                }
                if !initialized {
                    send(&sink, jsonrpc::error(&id, "Not initialized")).await;
                    continue;
                }
                let Ok(permit) = in_flight.clone().acquire_owned().await else {
                    break;
                };
                let hub = hub.clone();
                let sink = sink.clone();
                tokio::spawn(async move {
                    let reply = methods::handle(&hub, &sink, &id, &method, params).await;
                    if let Reply::Now(result) = reply {
                        send(&sink, reply_line(&id, result)).await;
                    }
                    drop(permit);
                });
            }
        }
    }
    hub.disconnect(sink.conn);
}

fn reply_line(id: &Value, result: Result<Value, String>) -> Line {
    match result {
        Ok(result) => jsonrpc::response(id, result),
        Err(message) => jsonrpc::error(id, message),
    }
}

async fn send(sink: &ClientSink, line: Line) {
    let _ = sink.tx.send(line).await;
}

fn initialize(hub: &Hub, params: Value) -> Result<Value, String> {
    let params: InitializeParams =
        serde_json::from_value(params).map_err(|err| jsonrpc::invalid_params(&err))?;
    let info = params.client_info;
    let response = InitializeResponse {
        user_agent: format!(
            "{}/{} ({}; {}) troupe ({}; {})",
            info.name,
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH,
            info.name,
            info.version
        ),
        codex_home: hub.home.display().to_string(),
        platform_family: std::env::consts::FAMILY.into(),
        platform_os: std::env::consts::OS.into(),
    };
    serde_json::to_value(response).map_err(|err| err.to_string())
}

/// Codex's `ToolRequestUserInputResponse`: answers by question id.
#[derive(serde::Deserialize)]
struct QuestionsResponse {
    answers: troupe_messages::questions::UserInputAnswers,
}

/// A client's answer to one of our approval requests.
async fn answer(hub: &Hub, sink: &ClientSink, id: Value, result: Result<Value, Value>) {
    let Some(request_id) = id.as_i64() else {
        send(
            sink,
            jsonrpc::error(&id, format!("no server request has id {id}")),
        )
        .await;
        return;
    };
    let Some(thread_id) = hub.approvals.owner(request_id) else {
        let message = format!("server request {request_id} is unknown or already answered");
        send(sink, jsonrpc::error(&id, message)).await;
        return;
    };
    // `{"answers": …}`: the answers to an `item/tool/requestUserInput` request.
    if let Ok(answered) = &result {
        if answered.get("answers").is_some() {
            match serde_json::from_value::<QuestionsResponse>(answered.clone()) {
                Ok(response) => {
                    if let Some(live) = hub.loaded(&thread_id) {
                        let _ = live.control.send(Control::AnswerQuestions {
                            client: sink.clone(),
                            request_id,
                            answers: response.answers,
                        });
                    }
                }
                Err(err) => send(sink, jsonrpc::error(&id, jsonrpc::invalid_params(&err))).await,
            }
            return;
        }
    }
    // An error answer declines: the turn goes on without running the call.
    let decision = match result {
        Ok(result) => match serde_json::from_value::<ApprovalResponse>(result) {
            Ok(response) => response.decision,
            Err(err) => {
                send(sink, jsonrpc::error(&id, jsonrpc::invalid_params(&err))).await;
                return;
            }
        },
        Err(_) => troupe_app_server_protocol::protocol::ApprovalDecision::Decline,
    };
    if let Some(live) = hub.loaded(&thread_id) {
        let _ = live.control.send(Control::Answer {
            client: sink.clone(),
            request_id,
            decision,
        });
    }
}
