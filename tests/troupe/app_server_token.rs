//! A loopback WebSocket app-server needs a token by default: without `--ws-token-file` a
//! fresh one is made, written to `$TROUPE_HOME/app-server/ws-PORT.token` (0600) and shown on
//! stderr, and a client without it is refused. Tokenless only with
//! `--ws-insecure-no-token`, said in a warning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::{harness, WAIT};
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use troupe_mock_model::MockResponse;
use troupe_test_support::{Harness, KEY_VAR};

/// Starts `troupe app-server --listen ws://127.0.0.1:0 EXTRA…`; the process and its stderr
/// lines up to the one saying where it listens, and the next one when `more` is set.
async fn start(harness: &Harness, extra: &[&str], more: bool) -> (Child, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_troupe"))
        .env("TROUPE_HOME", harness.home.path())
        .env(KEY_VAR, "test-key")
        .current_dir(harness.workdir.path())
        .args(["app-server", "--listen", "ws://127.0.0.1:0"])
        .args(extra)
        .kill_on_drop(true)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    loop {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the server speaks")
            .unwrap()
            .unwrap_or_else(|| panic!("stderr ended: {seen:?}"));
        let done = line.contains("listening on ws://");
        seen.push(line);
        if done {
            break;
        }
    }
    if more {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the server speaks")
            .unwrap()
            .unwrap();
        seen.push(line);
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, seen)
}

fn address(lines: &[String]) -> String {
    let line = lines
        .iter()
        .find(|l| l.contains("listening on ws://"))
        .unwrap();
    line.rsplit("ws://").next().unwrap().to_string()
}

async fn status(addr: &str, token: Option<&str>) -> u16 {
    let mut request = format!("ws://{addr}").into_client_request().unwrap();
    if let Some(token) = token {
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok(_) => 101,
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("unexpected: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_websocket_gets_a_token_by_default() {
    let harness = harness(vec![MockResponse::text("unused")]);
    let (_server, lines) = start(&harness, &[], true).await;
    let addr = address(&lines);
    let port = addr.rsplit(':').next().unwrap();
    let file = harness
        .home
        .path()
        .join("app-server")
        .join(format!("ws-{port}.token"));
    let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "{token}");
    let announced = lines.last().unwrap();
    assert!(
        announced.contains(&token) && announced.contains(&file.display().to_string()),
        "{lines:?}"
    );
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);

    assert_eq!(
        status(&addr, None).await,
        401,
        "a tokenless client is refused"
    );
    assert_eq!(status(&addr, Some("0123456789abcdef0123")).await, 401);
    assert_eq!(status(&addr, Some(&token)).await, 101);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokenless_only_by_the_explicit_flag() {
    let harness = harness(vec![MockResponse::text("unused")]);
    let (_server, lines) = start(&harness, &["--ws-insecure-no-token"], false).await;
    assert!(
        lines
            .iter()
            .any(|l| l.contains("warning: --ws-insecure-no-token")),
        "{lines:?}"
    );
    assert!(!harness.home.path().join("app-server").exists());
    assert_eq!(status(&address(&lines), None).await, 101);

    // Never on a non-loopback address.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
        .env("TROUPE_HOME", harness.home.path())
        .args([
            "app-server",
            "--listen",
            "ws://0.0.0.0:0",
            "--ws-insecure-no-token",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("without a capability token"),
        "{output:?}"
    );
}
