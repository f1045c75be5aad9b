//! The supervisor web page (`troupe app-server --web`) end to end: the real binary and the
//! mock model, checked over raw HTTP/WebSocket for its security layer, and in headless
//! Chromium (tests/web/page_test.mjs, driven by playwright-core) for what a person does.
//! Needs `node`, `/usr/bin/chromium` and `npm ci` in tests/web: missing ones fail the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::subagents_support::{spawn_call, wait_call};
use futures::StreamExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use troupe_mock_model::{split_text, MockResponse};
use troupe_test_support::{Harness, KEY_VAR};

const WAIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "web-page-test-token-0123456789abcdef";

pub(crate) struct WebServer {
    child: Child,
    pub(crate) url: String,
    addr: String,
}

pub(crate) async fn start_web(harness: &Harness, log_level: &str) -> WebServer {
    let token_file = harness.home.path().join("web-token");
    std::fs::write(&token_file, TOKEN).unwrap();
    // TROUPE_WEB_BIN: another build of the server (a release one, for frame figures).
    let bin = std::env::var("TROUPE_WEB_BIN").unwrap_or(env!("CARGO_BIN_EXE_troupe").into());
    let mut child = Command::new(bin)
        .env("TROUPE_HOME", harness.home.path())
        .env(KEY_VAR, "test-key")
        .env("RUST_LOG", log_level)
        .current_dir(harness.workdir.path())
        .args(["app-server", "--listen", "ws://127.0.0.1:0", "--web"])
        .arg("--ws-token-file")
        .arg(&token_file)
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("troupe app-server --web starts");
    let stdout = child.stdout.take().unwrap();
    let url = tokio::time::timeout(WAIT, BufReader::new(stdout).lines().next_line())
        .await
        .expect("the page URL is printed")
        .unwrap()
        .expect("a line on stdout");
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("an http URL")
        .to_string();
    assert_eq!(url, format!("http://{addr}/#token={TOKEN}"));
    WebServer { child, url, addr }
}

impl WebServer {
    /// Stops the server and returns everything it wrote on stderr.
    pub(crate) async fn stop(mut self) -> String {
        let _ = self.child.start_kill();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = tokio::time::timeout(WAIT, pipe.read_to_string(&mut stderr)).await;
        }
        stderr
    }
}

async fn http_get(addr: &str, request: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(WAIT, stream.read_to_string(&mut answer))
        .await
        .expect("the server answers and closes")
        .unwrap();
    answer
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The status of a WebSocket upgrade with these extra headers, and the selected subprotocol.
async fn upgrade(addr: &str, headers: &[(&'static str, String)]) -> (u16, Option<String>) {
    let mut request = format!("ws://{addr}/").into_client_request().unwrap();
    for (name, value) in headers {
        request
            .headers_mut()
            .insert(*name, value.parse().expect("header value"));
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((mut socket, response)) => {
            let protocol = response
                .headers()
                .get("sec-websocket-protocol")
                .map(|v| v.to_str().unwrap().to_string());
            let _ = socket.close(None).await;
            let _ = socket.next().await;
            (response.status().as_u16(), protocol)
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            (response.status().as_u16(), None)
        }
        Err(err) => panic!("upgrade failed oddly: {err}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_is_served_with_its_policy_and_only_the_token_opens_the_socket() {
    let harness = crate::app_server_support::harness(vec![]);
    // Everything the server logs, to prove the token is in none of it.
    let server = start_web(&harness, "debug").await;
    let addr = server.addr.clone();

    let page = http_get(&addr, &format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n")).await;
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page:.200}");
    assert!(page.contains(&format!("connect-src 'self' ws://{addr} ws://localhost:")));
    assert!(page.contains("X-Content-Type-Options: nosniff"));
    assert!(page.contains("<script type=\"module\" src=\"/app.js\">"));
    assert!(!page.contains(TOKEN));
    let script = http_get(
        &addr,
        &format!("GET /app.js HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
    )
    .await;
    assert!(
        script.contains("Content-Type: text/javascript"),
        "{script:.300}"
    );
    let rebound = http_get(&addr, "GET / HTTP/1.1\r\nHost: attacker.example\r\n\r\n").await;
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound:.200}");

    let own_origin = ("origin", format!("http://{addr}"));
    let offered = |token: &str| {
        (
            "sec-websocket-protocol",
            format!("troupe.app-server, troupe.token.{}", hex(token)),
        )
    };
    // The page's way in: its own origin and the token as a subprotocol.
    assert_eq!(
        upgrade(&addr, &[own_origin.clone(), offered(TOKEN)]).await,
        (101, Some("troupe.app-server".to_string()))
    );
    // A wrong token, no token, another origin: refused at the handshake.
    assert_eq!(
        upgrade(
            &addr,
            &[own_origin.clone(), offered("not-the-token-0123456789")]
        )
        .await
        .0,
        401
    );
    assert_eq!(
        upgrade(&addr, std::slice::from_ref(&own_origin)).await.0,
        401
    );
    let foreign = ("origin", "http://attacker.example".to_string());
    assert_eq!(upgrade(&addr, &[foreign, offered(TOKEN)]).await.0, 403);
    // The header way still works for programs.
    assert_eq!(
        upgrade(&addr, &[("authorization", format!("Bearer {TOKEN}"))])
            .await
            .0,
        101
    );
    let stderr = server.stop().await;
    assert!(
        !stderr.contains(TOKEN) && !stderr.contains(&hex(TOKEN)),
        "{stderr}"
    );
}

fn slow_text(text: &str) -> MockResponse {
    MockResponse::text_from_deltas(text, &split_text(text, 240)).odd_bytes(24)
}

fn words(tag: &str, end: &str) -> String {
    let body: Vec<String> = (0..240).map(|i| format!("{tag}{i}")).collect();
    format!("{tag} **streams** {} {end}", body.join(" "))
}

const HOSTILE_OUTPUT: &str = "<script>window.__canary='pwned'</script>\n<img src=x onerror=\"window.pwned=1\">\n\x1b[31mANSI-RED\x1b[0m \x1b]0;title\x07\n";
const HOSTILE_TEXT: &str = "Look <script>window.__canary='pwned'</script> and <img src=x onerror=\"window.pwned=1\">.\n\n[click me](javascript:window.pwned=2) and [safe](https://example.com/safe) and <a href=\"javascript:window.pwned=3\">raw</a>\n\n\x1b[31mANSI-RED\x1b[0m\n\nHOSTILE-END";

/// The sub-agent's parent answers from the main script: once it has spawned, its requests
/// carry the child's reports as their last user message, so they cannot be routed by a key.
fn parent_script() -> Vec<MockResponse> {
    vec![
        MockResponse::tool_calls(vec![spawn_call(
            "sp1",
            "helper",
            "child-marker: say hi",
            "none",
        )]),
        wait_call("wt1"),
        MockResponse::text("parent done"),
    ]
}

fn script_the_mock(harness: &Harness, interrupt_marker: &str) {
    let mock = &harness.mock;
    mock.route("alpha-task", vec![slow_text(&words("alpha", "ALPHA-END"))]);
    mock.route("beta-task", vec![slow_text(&words("beta", "BETA-END"))]);
    mock.route(
        "approve-task",
        vec![
            MockResponse::shell("ap1", &["touch", "approved-by-web"]),
            MockResponse::text("approve done"),
        ],
    );
    mock.route(
        "deny-task",
        vec![
            MockResponse::shell("dn1", &["touch", "denied-by-web"]),
            MockResponse::text("deny done"),
        ],
    );
    mock.route(
        "steer-task",
        vec![
            MockResponse::shell("st1", &["sleep", "4"]),
            MockResponse::text("not steered"),
        ],
    );
    mock.route("steer-extra", vec![MockResponse::text("steered reply")]);
    mock.route(
        "interrupt-task",
        vec![MockResponse::shell(
            "in1",
            &["sh", "-c", &format!("sleep 120; echo {interrupt_marker}")],
        )],
    );
    // Slow enough (~6 s) to be watched live while it runs.
    mock.route(
        "child-marker",
        vec![MockResponse::text_from_deltas(
            &words("child", "CHILD-END"),
            &split_text(&words("child", "CHILD-END"), 240),
        )
        .odd_bytes(6)],
    );
    mock.route("reconnect-task", vec![MockResponse::text("first answer")]);
    mock.route(
        "second-after-reconnect",
        vec![MockResponse::text("second answer")],
    );
    // Twenty threads streaming at once (`twenty_streams_frames`: a smoke by default, the
    // frame-time figures of docs/web.md when run alone against a release build).
    for i in 0..20 {
        let text = words(&format!("s{i}w"), "STREAM-END");
        mock.route(
            &format!("stream-{i}-task"),
            vec![MockResponse::text_from_deltas(&text, &split_text(&text, 600)).odd_bytes(12)],
        );
    }
    mock.route(
        "hostile-task",
        vec![
            MockResponse::shell("ho1", &["printf", HOSTILE_OUTPUT]),
            MockResponse::text(HOSTILE_TEXT),
        ],
    );
}

fn web_tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/web")
}

/// Fails loudly when a tool the browser test needs is missing: a skipped test proves nothing.
pub(crate) fn require_browser_tools() {
    let node = std::process::Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "`node` is missing: install nodejs (apt-get install nodejs npm)"
    );
    assert!(
        Path::new("/usr/bin/chromium").is_file(),
        "/usr/bin/chromium is missing: apt-get install chromium"
    );
    assert!(
        web_tests_dir()
            .join("node_modules/playwright-core/package.json")
            .is_file(),
        "playwright-core is missing: run `npm ci` in tests/web"
    );
}

fn process_alive(marker: &str) -> bool {
    std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_supervises_threads_from_headless_chromium() {
    require_browser_tools();
    crate::use_sandbox_helper();
    let harness = crate::app_server_support::harness(parent_script());
    // A known window for the context chart ("mock-model" has none built in).
    let config = harness.home.path().join("config.toml");
    let rest = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("model_context_window = 200000\n{rest}")).unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let interrupt_marker = format!("web-interrupt-marker-{}-{nanos}", std::process::id());
    script_the_mock(&harness, &interrupt_marker);
    let server = start_web(&harness, "info").await;
    let failure_shots = tempfile::tempdir().unwrap();
    let config = serde_json::json!({
        "url": server.url,
        "workdir": harness.workdir.path(),
        "interruptMarker": interrupt_marker,
        "screenshots": screenshots_dir(),
        "failureShots": failure_shots.path(),
        "only": std::env::var("TROUPE_WEB_CASES").ok(),
        "profileDir": std::env::var("TROUPE_WEB_PROFILE").ok(),
    });
    let run = tokio::time::timeout(
        Duration::from_secs(600),
        Command::new("node")
            .arg("page_test.mjs")
            .arg(config.to_string())
            .current_dir(web_tests_dir())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the browser test finishes in 10 minutes")
    .expect("node runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let server_log = server.stop().await;
    assert!(
        run.status.success(),
        "browser test failed:\n{stdout}\n{stderr}\n(screenshots in {}, kept)\nserver:\n{}",
        failure_shots.keep().display(),
        server_log
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!("{stdout}");
    if std::env::var("TROUPE_WEB_CASES").is_ok() {
        return;
    }
    // What the clicks did, seen from outside the browser.
    let workdir = harness.workdir.path();
    assert!(workdir.join("approved-by-web").exists(), "{stdout}");
    assert!(!workdir.join("denied-by-web").exists(), "{stdout}");
    let steered = harness
        .mock
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("steer-extra: change of plan"));
    assert!(steered, "the steer never reached the model");
    assert!(
        !process_alive(&interrupt_marker),
        "the interrupted command is still running"
    );
    assert!(!server_log.contains(TOKEN), "the token was logged");
}

#[test]
fn web_without_a_websocket_listener_is_refused_with_the_reason() {
    let harness = Harness::new(vec![]);
    let out = harness
        .command()
        .args(["app-server", "--web"])
        .stdin(Stdio::null())
        .output()
        .expect("troupe runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--web serves the page over WebSocket: use --listen ws://IP:PORT"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn troupe_web_prints_a_loopback_url_with_a_fresh_token_in_the_fragment() {
    let harness = crate::app_server_support::harness(vec![]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_troupe"))
        .env("TROUPE_HOME", harness.home.path())
        .current_dir(harness.workdir.path())
        .arg("web")
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("troupe web starts");
    let stdout = child.stdout.take().unwrap();
    let url = tokio::time::timeout(WAIT, BufReader::new(stdout).lines().next_line())
        .await
        .expect("the URL is printed")
        .unwrap()
        .expect("a line");
    let (page, token) = url.split_once("/#token=").expect("token in the fragment");
    let addr = page.strip_prefix("http://127.0.0.1:").expect("loopback");
    assert!(addr.parse::<u16>().is_ok(), "{url}");
    assert_eq!(token.len(), 64, "{url}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{url}");
    let addr = format!("127.0.0.1:{addr}");
    let answer = http_get(&addr, &format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer:.200}");
    let protocol = (
        "sec-websocket-protocol",
        format!("troupe.app-server, troupe.token.{}", hex(token)),
    );
    assert_eq!(upgrade(&addr, &[protocol]).await.0, 101);
    let _ = child.start_kill();
}

/// Where the browser test saves its screenshots: docs/web/ (the figures of docs/web.md,
/// refreshed by every run), or `TROUPE_WEB_SCREENSHOTS`.
fn screenshots_dir() -> PathBuf {
    std::env::var("TROUPE_WEB_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/web"))
}

/// Runs the named cases of tests/web/page_test.mjs against `server` (`extra` joins the
/// config); panics with the output (and the server's last log lines) when one fails.
pub(crate) async fn run_page_cases(
    server: WebServer,
    workdir: &Path,
    only: &str,
    extra: serde_json::Value,
) -> String {
    let failure_shots = tempfile::tempdir().unwrap();
    let mut config = serde_json::json!({
        "url": server.url,
        "workdir": workdir,
        "screenshots": screenshots_dir(),
        "failureShots": failure_shots.path(),
        "only": only,
    });
    if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(extra.clone());
    }
    let run = tokio::time::timeout(
        Duration::from_secs(300),
        Command::new("node")
            .arg("page_test.mjs")
            .arg(config.to_string())
            .current_dir(web_tests_dir())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the browser test finishes in 5 minutes")
    .expect("node runs");
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    let server_log = server.stop().await;
    assert!(
        run.status.success(),
        "browser test failed:\n{stdout}\n{}\n(screenshots in {}, kept)\nserver:\n{}",
        String::from_utf8_lossy(&run.stderr),
        failure_shots.keep().display(),
        server_log
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .join("\n")
    );
    stdout
}
