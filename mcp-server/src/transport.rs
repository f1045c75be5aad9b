//! The MCP server's stdio transport. rmcp's own stdio transport ends the whole service at the
//! first line it cannot decode (its reader yields "no more messages"), and its handshake ends
//! it at any request that is not `initialize`. So every line is checked here before rmcp sees
//! it: what rmcp cannot take is answered with a JSON-RPC error (or dropped, for a notification
//! or a stray response) and the server reads on. Replies and rmcp's own messages go through
//! one writer, a whole line at a time, so they never interleave.

use std::future::Future;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use troupe_mcp::rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use troupe_mcp::rmcp::transport::Transport;

/// The longest line read; a longer one is skipped (never held) and answered with an error.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// Where the client is in the MCP handshake (`initialize`, then `notifications/initialized`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Handshake {
    #[default]
    Fresh,
    /// `initialize` was passed on; rmcp now takes only `notifications/initialized`.
    Initializing,
    Ready,
}

/// What to do with one line from the client.
#[derive(Debug)]
pub enum Verdict {
    /// A message rmcp can take now.
    Forward(Box<RxJsonRpcMessage<RoleServer>>),
    /// Not for rmcp: write this line (a JSON-RPC error response) back.
    Reply(String),
    /// Not for rmcp and not answered (a blank line, a notification, a stray response).
    Ignore,
}

/// Checks each line against JSON-RPC and the handshake.
#[derive(Debug, Default)]
pub struct LineFilter {
    handshake: Handshake,
}

impl LineFilter {
    pub fn check(&mut self, line: &[u8]) -> Verdict {
        let line = line.trim_ascii();
        if line.is_empty() {
            return Verdict::Ignore;
        }
        let value: serde_json::Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(err) => {
                return Verdict::Reply(error_line(
                    &serde_json::Value::Null,
                    PARSE_ERROR,
                    &format!("Parse error: {err}"),
                ))
            }
        };
        let Some(object) = value.as_object() else {
            return Verdict::Reply(error_line(
                &serde_json::Value::Null,
                INVALID_REQUEST,
                "Invalid Request: a message is one JSON object (batches are not supported)",
            ));
        };
        let id = match object.get("id") {
            None => None,
            Some(id @ (serde_json::Value::String(_) | serde_json::Value::Number(_))) => {
                Some(id.clone())
            }
            Some(_) => {
                return Verdict::Reply(error_line(
                    &serde_json::Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: `id` must be a string or a number",
                ))
            }
        };
        let reply_id = id.clone().unwrap_or(serde_json::Value::Null);
        if object.get("jsonrpc").and_then(serde_json::Value::as_str) != Some("2.0") {
            return Verdict::Reply(error_line(
                &reply_id,
                INVALID_REQUEST,
                "Invalid Request: `jsonrpc` must be \"2.0\"",
            ));
        }
        let method = object.get("method").and_then(serde_json::Value::as_str);
        let kind = match (method, &id) {
            (Some(method), Some(_)) => Kind::Request(method),
            (Some(method), None) => Kind::Notification(method),
            (None, Some(_)) if object.contains_key("result") || object.contains_key("error") => {
                Kind::Response
            }
            (None, _) => {
                return Verdict::Reply(error_line(
                    &reply_id,
                    INVALID_REQUEST,
                    "Invalid Request: no `method` (and not a response)",
                ))
            }
        };
        match (self.handshake, kind) {
            (Handshake::Fresh, Kind::Request("initialize")) => {
                let verdict = decode(line, &reply_id);
                if matches!(verdict, Verdict::Forward(_)) {
                    self.handshake = Handshake::Initializing;
                }
                verdict
            }
            (Handshake::Initializing, Kind::Notification("notifications/initialized")) => {
                let verdict = decode(line, &reply_id);
                if matches!(verdict, Verdict::Forward(_)) {
                    self.handshake = Handshake::Ready;
                }
                verdict
            }
            (Handshake::Fresh | Handshake::Initializing, Kind::Request(_)) => {
                Verdict::Reply(error_line(&reply_id, INVALID_REQUEST, "Not initialized"))
            }
            (Handshake::Fresh | Handshake::Initializing, _) => Verdict::Ignore,
            (Handshake::Ready, Kind::Request(_)) => decode(line, &reply_id),
            // rmcp drops what it cannot match itself; one it cannot decode is dropped here.
            (Handshake::Ready, Kind::Notification(_) | Kind::Response) => {
                match decode(line, &reply_id) {
                    Verdict::Reply(_) => Verdict::Ignore,
                    verdict => verdict,
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind<'a> {
    Request(&'a str),
    Notification(&'a str),
    Response,
}

/// The message as rmcp types it; a well-formed message rmcp cannot type has bad params
/// (rmcp takes any method name, as a custom request or notification).
fn decode(line: &[u8], id: &serde_json::Value) -> Verdict {
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => Verdict::Forward(Box::new(message)),
        Err(err) => Verdict::Reply(error_line(
            id,
            INVALID_PARAMS,
            &format!("Invalid params: {err}"),
        )),
    }
}

/// One JSON-RPC error response, as a line.
pub fn error_line(id: &serde_json::Value, code: i64, message: &str) -> String {
    let response = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    });
    let mut line = response.to_string();
    line.push('\n');
    line
}

/// One line read from the client.
enum Line {
    Text(Vec<u8>),
    /// Longer than [`MAX_LINE_BYTES`]: skipped to its end.
    TooLong,
}

/// rmcp's transport over `read` and `write` with the lines checked first.
pub struct FilteredStdio<R, W> {
    reader: BufReader<R>,
    filter: LineFilter,
    writer: Arc<tokio::sync::Mutex<W>>,
}

impl<R, W> FilteredStdio<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    pub fn new(read: R, write: W) -> Self {
        Self {
            reader: BufReader::new(read),
            filter: LineFilter::default(),
            writer: Arc::new(tokio::sync::Mutex::new(write)),
        }
    }

    /// The next line; `None` at end of input (or a read error: the client is gone).
    async fn next_line(&mut self) -> Option<Line> {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let buffer = self.reader.fill_buf().await.ok()?;
            if buffer.is_empty() {
                // A last line without its newline still counts.
                return match (too_long, line.is_empty()) {
                    (true, _) => Some(Line::TooLong),
                    (false, true) => None,
                    (false, false) => Some(Line::Text(line)),
                };
            }
            let newline = buffer.iter().position(|b| *b == b'\n');
            let piece = &buffer[..newline.unwrap_or(buffer.len())];
            if !too_long {
                if line.len() + piece.len() > MAX_LINE_BYTES {
                    too_long = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(piece);
                }
            }
            let used = newline.map_or(buffer.len(), |at| at + 1);
            self.reader.consume(used);
            if newline.is_some() {
                return Some(if too_long {
                    Line::TooLong
                } else {
                    Line::Text(line)
                });
            }
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &tokio::sync::Mutex<W>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut writer = writer.lock().await;
    writer.write_all(line).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for FilteredStdio<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            write_line(&writer, &line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let reply = match self.next_line().await? {
                Line::TooLong => error_line(
                    &serde_json::Value::Null,
                    INVALID_REQUEST,
                    &format!("Invalid Request: a message is longer than {MAX_LINE_BYTES} bytes"),
                ),
                Line::Text(line) => match self.filter.check(&line) {
                    Verdict::Forward(message) => return Some(*message),
                    Verdict::Ignore => continue,
                    Verdict::Reply(reply) => reply,
                },
            };
            // Nobody reads the answers any more: the connection is over.
            if write_line(&self.writer, reply.as_bytes()).await.is_err() {
                return None;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
