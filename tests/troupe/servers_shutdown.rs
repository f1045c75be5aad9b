//! The servers stop cleanly: on SIGTERM/SIGINT/SIGHUP, and when their client goes away, every
//! running turn is ended and recorded (`turn_aborted`), every rollout lock released and every
//! command killed; a signal's exit status is 128 + its number. Commands never read the
//! server's own stdin. `troupe mcp-server` answers what is not JSON-RPC with JSON-RPC errors
//! and goes on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::{harness, start, Transport, WAIT};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use troupe_mock_model::MockResponse;
use troupe_test_support::{tool_outputs, Harness, KEY_VAR};

/// How many turns run at once when the server is stopped.
const TURNS: usize = 3;

/// A `shell` call that leaves `started.<pid>` in the work dir, then sleeps for a minute.
fn long_command(call_id: &str) -> MockResponse {
    let args = json!({
        "command": ["sh", "-c", "echo $$ > started.$$; exec sleep 60"],
        "timeout_ms": 120_000,
    })
    .to_string();
    MockResponse::tool_calls(vec![(call_id, "shell", args)])
}

/// A script for `TURNS` threads, each running one long command.
fn long_script() -> Vec<MockResponse> {
    (0..TURNS)
        .map(|n| long_command(&format!("call_{n}")))
        .chain((0..TURNS).map(|_| MockResponse::text("never asked")))
        .collect()
}

/// The pids of the commands started so far (one `started.<pid>` file each).
fn started_commands(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix("started.")?.parse().ok()?;
            // The file exists before its line is written.
            let text = std::fs::read_to_string(e.path()).ok()?;
            (text.trim() == name.trim_start_matches("started.")).then_some(pid)
        })
        .collect()
}

async fn wait_for_commands(dir: &Path) -> Vec<i32> {
    let deadline = Instant::now() + WAIT;
    loop {
        let pids = started_commands(dir);
        if pids.len() == TURNS {
            return pids;
        }
        assert!(Instant::now() < deadline, "only {pids:?} started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

async fn all_gone(pids: &[i32]) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|pid| running(*pid)) {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

fn lock_files(h: &Harness) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![h.home.path().join("sessions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(".lock") {
                found.push(path);
            }
        }
    }
    found
}

/// Checks that every one of the `TURNS` rollouts records its turn's abort, and no lock is left.
fn every_turn_ended(h: &Harness) {
    let rollouts = h.rollouts();
    assert_eq!(rollouts.len(), TURNS, "{rollouts:?}");
    for path in rollouts {
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn line {l}: {e}")))
            .collect();
        assert!(
            lines
                .iter()
                .any(|l| l["type"] == "event" && l["payload"]["type"] == "turn_aborted"),
            "{}: no turn_aborted in {lines:#?}",
            path.display()
        );
    }
    assert_eq!(lock_files(h), Vec::<PathBuf>::new());
}

/// An app-server on `transport` with `TURNS` turns each running a long command.
async fn app_server_with_running_turns(
    h: &Harness,
    transport: Transport,
) -> (
    crate::app_server_support::Server,
    crate::app_server_support::Client,
    Vec<i32>,
) {
    let mut server = start(h, transport, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    for _ in 0..TURNS {
        let thread = client
            .start_thread(
                h.workdir.path(),
                json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
            )
            .await;
        client.start_turn(&thread, "go").await;
    }
    let pids = wait_for_commands(h.workdir.path()).await;
    (server, client, pids)
}

async fn exit_code(child: &mut tokio::process::Child) -> Option<i32> {
    tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("the server exits")
        .expect("wait")
        .code()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_server_on_a_stop_signal_ends_and_records_every_running_turn() {
    let cases = [
        (Transport::Stdio, libc::SIGTERM, 143),
        (Transport::Stdio, libc::SIGINT, 130),
        (Transport::Stdio, libc::SIGHUP, 129),
        (Transport::Unix, libc::SIGTERM, 143),
        (Transport::Ws, libc::SIGTERM, 143),
    ];
    for (transport, signal, code) in cases {
        let h = harness(long_script());
        let (mut server, _client, pids) = app_server_with_running_turns(&h, transport).await;
        let pid = server.child.id().expect("pid") as i32;
        // SAFETY: kill(2) on the server this test started.
        unsafe { libc::kill(pid, signal) };
        assert_eq!(
            exit_code(&mut server.child).await,
            Some(code),
            "{transport:?}, signal {signal}"
        );
        assert!(
            all_gone(&pids).await,
            "commands {pids:?} outlived the server"
        );
        every_turn_ended(&h);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_server_whose_client_closes_stdin_ends_and_records_every_running_turn() {
    let h = harness(long_script());
    let (mut server, client, pids) = app_server_with_running_turns(&h, Transport::Stdio).await;
    drop(client);
    assert_eq!(exit_code(&mut server.child).await, Some(0));
    assert!(
        all_gone(&pids).await,
        "commands {pids:?} outlived the server"
    );
    every_turn_ended(&h);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_reading_stdin_gets_end_of_file_not_the_servers_stdin() {
    crate::use_sandbox_helper();
    let script = "cat; read x; echo read-to-the-end";
    let exec_command = json!({"cmd": script, "shell": "sh", "tty": false}).to_string();
    // Every spawn path: unconfined, the `linux` backend's zygote, the `landlock` backend's
    // helper, and `exec_command` on pipes. The server's stdin is the client's pipe, open for
    // as long as the test runs.
    let cases: [(&str, MockResponse, &[&str]); 4] = [
        (
            "danger-full-access",
            MockResponse::shell("call_cat", &["sh", "-c", script]),
            &[],
        ),
        (
            "workspace-write",
            MockResponse::shell("call_cat", &["sh", "-c", script]),
            &[],
        ),
        (
            "workspace-write",
            MockResponse::shell("call_cat", &["sh", "-c", script]),
            &["-c", "sandbox_backend=\"landlock\""],
        ),
        (
            "danger-full-access",
            MockResponse::tool_calls(vec![("call_cat", "exec_command", exec_command)]),
            &["-c", "shell_tool_type=\"exec_command\""],
        ),
    ];
    for (sandbox, call, extra) in cases {
        let what = format!("{sandbox} {extra:?}");
        let h = harness(vec![call, MockResponse::text("done")]);
        let mut server = start(&h, Transport::Stdio, extra).await;
        let mut client = server.connect().await;
        client.initialize().await;
        let thread = client
            .start_thread(
                h.workdir.path(),
                json!({"sandbox": sandbox, "approvalPolicy": "never"}),
            )
            .await;
        let started = Instant::now();
        client.start_turn(&thread, "go").await;
        tokio::time::timeout(
            Duration::from_secs(20),
            client.until_turn_completed(&thread),
        )
        .await
        .unwrap_or_else(|_| panic!("{what}: the turn hangs on stdin"));
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
        let requests = h.mock.requests();
        let outputs = tool_outputs(&requests.last().expect("a request").body);
        assert!(
            outputs.iter().any(|o| o.contains("read-to-the-end")),
            "{what}: {outputs:?}"
        );
    }
}

/// `troupe mcp-server` over raw lines.
struct McpServer {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl McpServer {
    fn start(h: &Harness) -> Self {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
            .env("TROUPE_HOME", h.home.path())
            .env(KEY_VAR, "test-key")
            .current_dir(h.workdir.path())
            .arg("mcp-server")
            .kill_on_drop(true)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mcp-server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next line the server writes, as JSON.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.stdout.next_line())
            .await
            .expect("the server answers")
            .expect("stdout readable")
            .expect("the server is still there");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"))
    }

    async fn handshake(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}})
            .to_string(),
        )
        .await;
        let reply = self.next().await;
        assert!(reply["result"]["serverInfo"].is_object(), "{reply}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }

    async fn tools_listed(&mut self, id: i64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string())
            .await;
        let reply = self.next().await;
        assert_eq!(reply["id"], json!(id), "{reply}");
        assert!(reply["result"]["tools"].is_array(), "{reply}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_answers_garbage_and_early_requests_with_errors_and_stays_up() {
    let h = harness(vec![]);
    let mut server = McpServer::start(&h);
    // Before `initialize`: an error with the request's id, and the server goes on.
    server
        .send(r#"{"jsonrpc":"2.0","id":"early","method":"tools/list"}"#)
        .await;
    let reply = server.next().await;
    assert_eq!(reply["id"], json!("early"), "{reply}");
    assert_eq!(
        reply["error"]["message"],
        json!("Not initialized"),
        "{reply}"
    );
    server.handshake().await;
    let cases = [
        ("garbage", -32700),
        ("[]", -32600),
        ("{}", -32600),
        (r#"{"id":3,"method":"tools/list"}"#, -32600),
    ];
    for (n, (line, code)) in cases.into_iter().enumerate() {
        server.send(line).await;
        let reply = server.next().await;
        assert_eq!(reply["jsonrpc"], json!("2.0"), "{line}: {reply}");
        assert_eq!(reply["error"]["code"], json!(code), "{line}: {reply}");
        // Still serving.
        server.tools_listed(10 + n as i64).await;
    }
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server exited"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_on_sigterm_or_a_closed_stdin_ends_and_records_every_running_turn() {
    for by_signal in [true, false] {
        let h = harness(long_script());
        let mut server = McpServer::start(&h);
        server.handshake().await;
        for n in 0..TURNS {
            let call = json!({"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": {
                "name": "troupe",
                "arguments": {"prompt": "go", "sandbox": "danger-full-access",
                              "approval-policy": "never"}}});
            server.send(&call.to_string()).await;
        }
        let pids = wait_for_commands(h.workdir.path()).await;
        let McpServer {
            mut child, stdin, ..
        } = server;
        let expected = if by_signal {
            let pid = child.id().expect("pid") as i32;
            // SAFETY: kill(2) on the server this test started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            Some(143)
        } else {
            drop(stdin);
            Some(0)
        };
        assert_eq!(
            exit_code(&mut child).await,
            expected,
            "by signal: {by_signal}"
        );
        assert!(
            all_gone(&pids).await,
            "commands {pids:?} outlived the server"
        );
        every_turn_ended(&h);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_exits_with_the_signal_status() {
    let h = harness(vec![]);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
        .env("TROUPE_HOME", h.home.path())
        .env(KEY_VAR, "test-key")
        .current_dir(h.workdir.path())
        .arg("web")
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("web starts");
    // It prints its URL once it listens.
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(WAIT, stdout.next_line())
        .await
        .expect("the URL is printed")
        .unwrap()
        .unwrap_or_default();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let pid = child.id().expect("pid") as i32;
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(exit_code(&mut child).await, Some(143));
}
