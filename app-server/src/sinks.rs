//! Where a thread's lines go: each client's bounded queue (and the notice of what it missed
//! when it fell behind), and the server requests waiting for a client's answer.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, Notify};
use troupe_app_server_protocol::jsonrpc::{self, Line};
use troupe_app_server_protocol::protocol::LaggedNotification;

/// Notices a client's writer sends once it has room again: threads on which it fell behind.
#[derive(Default)]
pub struct LagBoard {
    pending: Mutex<HashMap<String, u64>>,
    pub wake: Notify,
}

impl LagBoard {
    pub(crate) fn record(&self, thread_id: &str) {
        if let Ok(mut pending) = self.pending.lock() {
            *pending.entry(thread_id.to_string()).or_default() += 1;
        }
        self.wake.notify_one();
    }

    /// The `troupe/lagged` notifications due, emptying the board.
    pub fn take_notices(&self) -> Vec<Line> {
        let drained: Vec<(String, u64)> = match self.pending.lock() {
            Ok(mut pending) => pending.drain().collect(),
            Err(_) => Vec::new(),
        };
        drained
            .into_iter()
            .map(|(thread_id, dropped)| {
                jsonrpc::notification(
                    "troupe/lagged",
                    serde_json::to_value(LaggedNotification { thread_id, dropped })
                        .unwrap_or(Value::Null),
                )
            })
            .collect()
    }
}

/// Where one connection's lines go: a bounded queue drained by its writer.
#[derive(Clone)]
pub struct ClientSink {
    pub conn: u64,
    pub tx: mpsc::Sender<Line>,
    pub lag: Arc<LagBoard>,
}

impl ClientSink {
    /// Queues a line; false when the client is gone or its queue is full.
    pub(crate) fn send(&self, line: Line) -> bool {
        self.tx.try_send(line).is_ok()
    }
}

/// Server request ids (shared by every thread) and which thread asked each.
#[derive(Default)]
pub struct Approvals {
    next_id: AtomicI64,
    owners: Mutex<HashMap<i64, String>>,
}

impl Approvals {
    pub(crate) fn register(&self, thread_id: &str) -> i64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut owners) = self.owners.lock() {
            owners.insert(id, thread_id.to_string());
        }
        id
    }

    /// Registers `id` again (an answer to it could not be delivered).
    pub(crate) fn keep(&self, id: i64, thread_id: &str) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.insert(id, thread_id.to_string());
        }
    }

    pub(crate) fn forget(&self, id: i64) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(&id);
        }
    }

    /// The thread that asked request `id`, if it still waits for an answer.
    pub fn owner(&self, id: i64) -> Option<String> {
        self.owners.lock().ok()?.get(&id).cloned()
    }
}
