//! A small app-server client written against Codex's schema, over the three transports, and
//! a server process of the real `troupe` binary.
#![allow(dead_code)]

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use troupe_test_support::{Harness, KEY_VAR};

pub const WAIT: Duration = Duration::from_secs(30);
pub const TOKEN: &str = "a-test-capability-token-0123456789";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Unix,
    Ws,
}

pub const ALL: [Transport; 3] = [Transport::Stdio, Transport::Unix, Transport::Ws];

/// A running `troupe app-server`.
pub struct Server {
    pub child: Child,
    pub transport: Transport,
    pub socket: Option<PathBuf>,
    pub ws_addr: Option<String>,
    stdio: Option<(
        mpsc::UnboundedSender<String>,
        mpsc::UnboundedReceiver<Value>,
    )>,
}

/// `troupe app-server` for this harness, listening on `transport`.
pub async fn start(harness: &Harness, transport: Transport, extra: &[&str]) -> Server {
    start_with_env(harness, transport, extra, &[]).await
}

/// [`start`] with extra environment variables for the server.
pub async fn start_with_env(
    harness: &Harness,
    transport: Transport,
    extra: &[&str],
    env: &[(&str, &std::path::Path)],
) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_troupe"));
    cmd.envs(env.iter().copied())
        .env("TROUPE_HOME", harness.home.path())
        .env(KEY_VAR, "test-key")
        .current_dir(harness.workdir.path())
        .arg("app-server")
        .kill_on_drop(true)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let socket = harness.home.path().join("app.sock");
    let token_file = harness.home.path().join("token");
    std::fs::write(&token_file, TOKEN).expect("token file");
    match transport {
        Transport::Stdio => {}
        Transport::Unix => {
            cmd.arg("--listen")
                .arg(format!("unix://{}", socket.display()));
        }
        Transport::Ws => {
            cmd.args(["--listen", "ws://127.0.0.1:0", "--ws-token-file"])
                .arg(&token_file);
        }
    }
    cmd.args(extra);
    let child = cmd.spawn().expect("app-server starts");
    let mut server = Server {
        child,
        transport,
        socket: None,
        ws_addr: None,
        stdio: None,
    };
    let stderr = server.child.stderr.take().expect("stderr");
    let mut stderr = BufReader::new(stderr).lines();
    match transport {
        Transport::Stdio => {
            let stdin = server.child.stdin.take().expect("stdin");
            let stdout = server.child.stdout.take().expect("stdout");
            server.stdio = Some(pump_lines(stdout, stdin, Arc::new(AtomicBool::new(false))));
            tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
        }
        Transport::Unix | Transport::Ws => {
            // The server says where it listens once it does.
            let line = tokio::time::timeout(WAIT, stderr.next_line())
                .await
                .expect("server announces its address")
                .expect("stderr readable")
                .expect("a line");
            let addr = line.rsplit(' ').next().expect("an address").to_string();
            if transport == Transport::Unix {
                server.socket = Some(PathBuf::from(addr.trim_start_matches("unix://")));
            } else {
                server.ws_addr = Some(addr.trim_start_matches("ws://").to_string());
            }
            tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
        }
    }
    server
}

fn pump_lines<R, W>(
    read: R,
    mut write: W,
    paused: Arc<AtomicBool>,
) -> (
    mpsc::UnboundedSender<String>,
    mpsc::UnboundedReceiver<Value>,
)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let (in_tx, in_rx) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        while let Some(line) = out_rx.recv().await {
            if write.write_all(line.as_bytes()).await.is_err()
                || write.write_all(b"\n").await.is_err()
            {
                break;
            }
            let _ = write.flush().await;
        }
    });
    tokio::spawn(async move {
        let mut lines = BufReader::with_capacity(4096, read).lines();
        loop {
            while paused.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let Ok(Some(line)) = lines.next_line().await else {
                break;
            };
            let value: Value = serde_json::from_str(&line).expect("server writes JSON lines");
            if in_tx.send(value).is_err() {
                break;
            }
        }
    });
    (out_tx, in_rx)
}

impl Server {
    /// A new client connection (for stdio, the one client there is).
    pub async fn connect(&mut self) -> Client {
        let paused = Arc::new(AtomicBool::new(false));
        let (tx, rx) = match self.transport {
            Transport::Stdio => self.stdio.take().expect("stdio has one client"),
            Transport::Unix => {
                let stream = tokio::net::UnixStream::connect(self.socket.as_ref().expect("socket"))
                    .await
                    .expect("connect to the unix socket");
                let (read, write) = stream.into_split();
                pump_lines(read, write, paused.clone())
            }
            Transport::Ws => {
                let url = format!("ws://{}", self.ws_addr.as_ref().expect("ws address"));
                let mut request = url.into_client_request().expect("request");
                request.headers_mut().insert(
                    "authorization",
                    format!("Bearer {TOKEN}").parse().expect("header"),
                );
                let (socket, _) = tokio_tungstenite::connect_async(request)
                    .await
                    .expect("websocket connects");
                let (mut write, mut read) = socket.split();
                let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
                let (in_tx, in_rx) = mpsc::unbounded_channel::<Value>();
                tokio::spawn(async move {
                    while let Some(line) = out_rx.recv().await {
                        if write.send(Message::text(line)).await.is_err() {
                            break;
                        }
                    }
                    let _ = write.close().await;
                });
                tokio::spawn(async move {
                    while let Some(Ok(message)) = read.next().await {
                        if let Message::Text(text) = message {
                            let value: Value =
                                serde_json::from_str(text.as_str()).expect("JSON frame");
                            if in_tx.send(value).is_err() {
                                break;
                            }
                        }
                    }
                });
                (out_tx, in_rx)
            }
        };
        Client {
            tx,
            rx,
            backlog: VecDeque::new(),
            next_id: 100,
            paused,
            received: Vec::new(),
            sent_methods: std::collections::HashMap::new(),
        }
    }
}

/// One connection: requests, and everything else the server sends, in order.
pub struct Client {
    tx: mpsc::UnboundedSender<String>,
    rx: mpsc::UnboundedReceiver<Value>,
    /// Messages received while waiting for something else.
    pub backlog: VecDeque<Value>,
    next_id: i64,
    paused: Arc<AtomicBool>,
    /// Every message received, in order, and the method of each request sent by id: what
    /// the conformance test checks against Codex's schema.
    pub received: Vec<Value>,
    pub sent_methods: std::collections::HashMap<i64, String>,
}

impl Client {
    /// Stops reading from the socket (the server's writes back up).
    pub fn pause(&mut self) {
        self.paused.store(true, Ordering::SeqCst);
    }

    pub fn resume(&mut self) {
        self.paused.store(false, Ordering::SeqCst);
    }

    pub fn send_raw(&self, line: &str) {
        self.tx.send(line.to_string()).expect("connection open");
    }

    pub fn send(&self, value: Value) {
        self.send_raw(&value.to_string());
    }

    async fn recv(&mut self) -> Value {
        let message = tokio::time::timeout(WAIT, self.rx.recv())
            .await
            .expect("the server answers in time")
            .expect("the connection is open");
        self.received.push(message.clone());
        message
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    pub async fn request_raw(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.sent_methods.insert(id, method.to_string());
        self.send(json!({"id": id, "method": method, "params": params}));
        self.response(id).await
    }

    /// The response with this id; other messages go to the backlog.
    pub async fn response(&mut self, id: i64) -> Value {
        loop {
            let message = self.recv().await;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    /// The result of a request that must succeed.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_raw(method, params.clone()).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} {params} failed: {response}"),
        }
    }

    /// The error message of a request that must fail (Codex's shape: code -32600).
    pub async fn request_error(&mut self, method: &str, params: Value) -> String {
        let response = self.request_raw(method, params).await;
        let error = response
            .get("error")
            .unwrap_or_else(|| panic!("{method} succeeded: {response}"));
        assert_eq!(error["code"], json!(-32600), "{response}");
        error["message"].as_str().expect("message").to_string()
    }

    pub async fn initialize(&mut self) {
        let result = self
            .request(
                "initialize",
                json!({"clientInfo": {"name": "test", "version": "0.0.1"}}),
            )
            .await;
        assert!(result["userAgent"].as_str().is_some(), "{result}");
        self.send(json!({"method": "initialized"}));
    }

    /// The next message (backlog first).
    pub async fn next(&mut self) -> Value {
        match self.backlog.pop_front() {
            Some(message) => message,
            None => self.recv().await,
        }
    }

    /// Messages up to and including the first `pred` matches.
    pub async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next().await;
            let done = pred(&message);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    /// Messages until `turn/completed` of this thread.
    pub async fn until_turn_completed(&mut self, thread_id: &str) -> Vec<Value> {
        let thread_id = thread_id.to_string();
        self.until(move |m| m["method"] == "turn/completed" && m["params"]["threadId"] == thread_id)
            .await
    }

    /// Starts a thread in `cwd` with these extra params; returns its id.
    pub async fn start_thread(&mut self, cwd: &std::path::Path, extra: Value) -> String {
        let mut params = json!({"cwd": cwd});
        if let (Some(map), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            map.extend(extra.clone());
        }
        let result = self.request("thread/start", params).await;
        result["thread"]["id"]
            .as_str()
            .expect("thread id")
            .to_string()
    }

    /// Starts a turn with one text input; returns the turn id.
    pub async fn start_turn(&mut self, thread_id: &str, text: &str) -> String {
        let result = self
            .request(
                "turn/start",
                json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]}),
            )
            .await;
        result["turn"]["id"].as_str().expect("turn id").to_string()
    }
}

/// The methods of notifications, in order.
pub fn methods(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .collect()
}

/// A harness built off the async runtime (the mock starts its own).
pub fn harness(script: Vec<troupe_mock_model::MockResponse>) -> Harness {
    tokio::task::block_in_place(|| Harness::new(script))
}

/// A harness whose mock answers every request from its body.
pub fn auto_harness(config: troupe_mock_model::AutoConfig) -> Harness {
    tokio::task::block_in_place(|| {
        Harness::with_behaviour(troupe_mock_model::Behaviour::Auto(config), "")
    })
}
