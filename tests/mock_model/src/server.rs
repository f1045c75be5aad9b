//! The running mock server and its lifecycle.
//!
//! The server runs on its own thread with its own tokio runtime, so it keeps
//! answering even when the test that owns it blocks its runtime (e.g. waiting
//! synchronously on a child process). Dropping the [`MockModel`] shuts the
//! runtime down, which closes every connection, stalled streams included.

use std::collections::VecDeque;
use std::fs::OpenOptions;
use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use axum::extract::DefaultBodyLimit;
use axum::serve::ListenerExt;
use axum::Router;
use tokio::sync::oneshot;

use crate::auto::AutoConfig;
use crate::response::MockResponse;
use crate::wire::{self, lock, RecordedRequest, Shared};

/// What the server answers when its script queue is empty.
#[derive(Debug, Clone, PartialEq)]
pub enum Behaviour {
    /// Answer from this script (FIFO); afterwards HTTP 500 "mock script exhausted".
    Script(Vec<MockResponse>),
    /// Answer every request statelessly from its body (benchmarks). Responses
    /// queued with [`MockModel::push`] still take precedence.
    Auto(AutoConfig),
    /// Auto mode playing a root that spawns `agents` sub-agents and waits for them all,
    /// and those sub-agents (see [`crate::multi_agent`]).
    MultiAgent { config: AutoConfig, agents: usize },
}

/// Everything needed to start a server.
#[derive(Debug, Clone, PartialEq)]
pub struct MockOptions {
    /// What to answer.
    pub behaviour: Behaviour,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Keep every request for [`MockModel::requests`] (turn off for long
    /// benchmarks to bound memory).
    pub record: bool,
    /// Append one line per request to this file.
    pub log_file: Option<PathBuf>,
    /// Tokio worker threads of the server runtime.
    pub worker_threads: usize,
    /// Serve Responses over WebSocket at `GET /v1/responses` (an upgrade); when false the
    /// upgrade is refused with 404, as by a server without WebSockets.
    pub websockets: bool,
}

impl MockOptions {
    /// Defaults: free port, recording on, no log, 2 worker threads.
    pub fn new(behaviour: Behaviour) -> Self {
        MockOptions {
            behaviour,
            port: 0,
            record: true,
            log_file: None,
            worker_threads: 2,
            websockets: true,
        }
    }
}

/// A running mock of the Responses API on loopback.
pub struct MockModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModel")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockModel {
    /// Starts a server answering with `script`, on a free loopback port.
    pub async fn start(script: Vec<MockResponse>) -> io::Result<MockModel> {
        Self::start_with(Behaviour::Script(script)).await
    }

    /// Starts a server with the given behaviour, on a free loopback port.
    pub async fn start_with(behaviour: Behaviour) -> io::Result<MockModel> {
        Self::start_options(MockOptions::new(behaviour)).await
    }

    /// Starts a server with full options.
    pub async fn start_options(options: MockOptions) -> io::Result<MockModel> {
        let (model, ready) = Self::spawn(options)?;
        match ready.await {
            Ok(result) => result.map(|()| model),
            Err(_) => Err(io::Error::other("mock server thread exited during startup")),
        }
    }

    /// Like [`MockModel::start_options`] for synchronous callers. Must not be
    /// called from inside an async task.
    pub fn start_blocking(options: MockOptions) -> io::Result<MockModel> {
        let (model, ready) = Self::spawn(options)?;
        match ready.blocking_recv() {
            Ok(result) => result.map(|()| model),
            Err(_) => Err(io::Error::other("mock server thread exited during startup")),
        }
    }

    fn spawn(options: MockOptions) -> io::Result<(MockModel, oneshot::Receiver<io::Result<()>>)> {
        let listener = StdListener::bind(("127.0.0.1", options.port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let log = match &options.log_file {
            Some(path) => Some(Mutex::new(
                OpenOptions::new().create(true).append(true).open(path)?,
            )),
            None => None,
        };
        let (script, auto, agents) = match options.behaviour {
            Behaviour::Script(s) => (s, None, 0),
            Behaviour::Auto(cfg) => (Vec::new(), Some(cfg), 0),
            Behaviour::MultiAgent { config, agents } => (Vec::new(), Some(config), agents),
        };
        let shared = Arc::new(Shared {
            script: Mutex::new(VecDeque::from(script)),
            routes: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            count: AtomicU64::new(0),
            auto,
            record: options.record,
            log,
            connections: AtomicU64::new(0),
            agents,
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let mut app = Router::new();
        if options.websockets {
            app = app.route(
                "/v1/responses",
                axum::routing::get(crate::websocket::upgrade).post(wire::handle),
            );
        }
        let app = app
            .fallback(wire::handle)
            .layer(DefaultBodyLimit::disable())
            .with_state(Arc::clone(&shared));
        let workers = options.worker_threads.max(1);
        let thread = std::thread::Builder::new()
            .name(format!("mock-model-{}", addr.port()))
            .spawn(move || serve(listener, app, workers, ready_tx, stop_rx))?;
        let model = MockModel {
            addr,
            shared,
            shutdown: Some(stop_tx),
            thread: Some(thread),
        };
        Ok((model, ready_rx))
    }

    /// Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order (empty if recording is off).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Number of requests received so far (counted even if recording is off).
    pub fn request_count(&self) -> u64 {
        self.shared.count.load(Ordering::Relaxed)
    }

    /// WebSocket connections accepted so far.
    pub fn websocket_connections(&self) -> u64 {
        self.shared.connections.load(Ordering::Relaxed)
    }

    /// Appends a response to the script while running.
    pub fn push(&self, response: MockResponse) {
        lock(&self.shared.script).push_back(response);
    }

    /// Adds a script for another conversation: requests whose last user message contains
    /// `key` are answered from `script` (in order) instead of the main script. Keys are tried
    /// in the order they were added. Sub-agent tests route each child by a word of its task.
    pub fn route(&self, key: &str, script: Vec<MockResponse>) {
        lock(&self.shared.routes).push((key.to_string(), VecDeque::from(script)));
    }

    /// Scripted responses not yet consumed.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // The thread only drops its runtime in the background; joining is quick.
            let _ = thread.join();
        }
    }
}

/// Body of the server thread: runs axum until told to stop, then tears the
/// runtime down without waiting for open connections.
fn serve(
    listener: StdListener,
    app: Router,
    workers: usize,
    ready: oneshot::Sender<io::Result<()>>,
    stop: oneshot::Receiver<()>,
) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("mock-model-worker")
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        let listener = listener.tap_io(|tcp| {
            // Small writes must leave immediately for chunking tests; failure is harmless.
            let _ = tcp.set_nodelay(true);
        });
        let _ = ready.send(Ok(()));
        tokio::select! {
            _ = axum::serve(listener, app) => {}
            _ = stop => {}
        }
    });
    runtime.shutdown_background();
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
