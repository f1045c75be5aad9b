//! JSON-RPC framing as Codex's app-server speaks it: one JSON object per line (or WebSocket
//! text frame), `jsonrpc` accepted but never written, every error with code -32600, every
//! notification stamped with `emittedAtMs`.

use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Codex answers every request error with this code.
pub const ERROR_CODE: i64 = -32600;

/// One message a client sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
    },
    /// The answer to one of our server requests.
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
}

/// Why a line is not a message.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameError {
    /// Not JSON at all: Codex answers nothing (there is no id to answer).
    NotJson(String),
    /// JSON, but not a request, notification or response; answered when it has an id.
    Invalid { id: Value, message: String },
}

/// Parses one line.
pub fn parse(line: &[u8]) -> Result<Incoming, FrameError> {
    let value: Value =
        serde_json::from_slice(line).map_err(|err| FrameError::NotJson(err.to_string()))?;
    let Value::Object(mut object) = value else {
        return Err(FrameError::Invalid {
            id: Value::Null,
            message: "Invalid request: expected a JSON object".into(),
        });
    };
    let id = object.remove("id");
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) if valid_id(&id) => Ok(Incoming::Request {
            id,
            method,
            params: object.remove("params").unwrap_or(Value::Null),
        }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method }),
        (Some(_), id) => Err(FrameError::Invalid {
            id: id.filter(valid_id).unwrap_or(Value::Null),
            message: "Invalid request: `method` must be a string and `id` a string or integer"
                .into(),
        }),
        (None, Some(id)) => match (object.remove("result"), object.remove("error")) {
            (Some(result), None) => Ok(Incoming::Response {
                id,
                result: Ok(result),
            }),
            (None, Some(error)) => Ok(Incoming::Response {
                id,
                result: Err(error),
            }),
            _ => Err(FrameError::Invalid {
                id,
                message: "Invalid request: missing field `method`".into(),
            }),
        },
        (None, None) => Err(FrameError::Invalid {
            id: Value::Null,
            message: "Invalid request: missing field `method`".into(),
        }),
    }
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// A serialised line, shared by every client it goes to.
pub type Line = Arc<str>;

pub fn response(id: &Value, result: Value) -> Line {
    line(json!({ "id": id, "result": result }))
}

pub fn error(id: &Value, message: impl Into<String>) -> Line {
    line(json!({ "id": id, "error": { "code": ERROR_CODE, "message": message.into() } }))
}

pub fn notification(method: &str, params: Value) -> Line {
    let mut object = Map::new();
    object.insert("method".into(), Value::String(method.into()));
    object.insert("params".into(), params);
    object.insert("emittedAtMs".into(), json!(now_ms()));
    line(Value::Object(object))
}

pub fn server_request(id: i64, method: &str, params: Value) -> Line {
    line(json!({ "id": id, "method": method, "params": params }))
}

fn line(value: Value) -> Line {
    Arc::from(value.to_string())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// An RFC 3339 timestamp in milliseconds since the epoch (0 when unreadable).
pub fn parse_time_ms(timestamp: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(timestamp)
        .map(|t| t.timestamp_millis())
        .unwrap_or(0)
}

/// Serde's message for params that do not fit, in Codex's words.
pub fn invalid_params(err: &serde_json::Error) -> String {
    format!("Invalid request: {err}")
}
