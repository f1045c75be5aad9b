//! Network approvals through the runtime's proxy: with the network off in the `linux`
//! sandbox, a command reaches a host only through its proxy, and only once the host is
//! approved (`network-access <host>`: once, for the session, denied → 403), by the user or
//! a PermissionRequest hook (`tool_name: Bash`). A loopback HTTP server stands in for the
//! internet; its name comes from the proxy's host map (no DNS). Every other way out fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::approval_support::*;
use crate::hooks_support::{add_hooks, capture, captured, hook, script};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use troupe_messages::events::EventMsg;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{SessionSettings, ShellToolType};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, tool_outputs, Harness};

const HOST: &str = "api.example.test";

/// A tiny HTTP server on the host's loopback: answers `hello` and counts requests.
struct Internet {
    port: u16,
    hits: Arc<AtomicUsize>,
}

fn internet() -> Internet {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
            );
        }
    });
    Internet { port, hits }
}

fn proxied(settings: &mut SessionSettings) {
    settings.sandbox.network_proxy.enabled = true;
    settings
        .sandbox
        .network_proxy
        .hosts
        .insert(HOST.into(), "127.0.0.1".into());
}

/// `curl` printing the status code (and the body) of `url`, through `HTTP_PROXY`.
fn curl(call_id: &str, extra: &[&str], url: &str) -> MockResponse {
    let mut argv = vec![
        "curl",
        "-sS",
        "--max-time",
        "20",
        "-w",
        "\nstatus=%{http_code}",
    ];
    argv.extend(extra);
    argv.push(url);
    MockResponse::shell(call_id, &argv)
}

fn network_asks(events: &[EventMsg]) -> Vec<Vec<String>> {
    events
        .iter()
        .filter_map(|e| match e {
            EventMsg::ExecApprovalRequest { command, .. } => Some(command.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_host_passes_a_denied_one_gets_403() {
    let net = internet();
    let url = format!("http://{HOST}:{}/hello", net.port);
    let mut s = setup_with(
        vec![
            curl("c1", &[], &url),
            // CONNECT (what https uses), to the same host: approved for this command only,
            // so asked again.
            curl("c2", &["--proxytunnel"], &url),
            MockResponse::text("done"),
            curl("c3", &[], &url),
            MockResponse::text("denied"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        proxied,
    )
    .await;
    let (events, asked) = turn(
        &mut s,
        &[ReviewDecision::Approved, ReviewDecision::Approved],
    )
    .await;
    assert_eq!(asked, 2);
    assert_eq!(
        network_asks(&events),
        vec![
            vec!["network-access".to_string(), HOST.to_string()],
            vec!["network-access".to_string(), HOST.to_string()]
        ]
    );
    let requests = s.mock.requests();
    let first = &tool_outputs(&requests[1].body)[0];
    assert!(
        first.contains("hello") && first.contains("status=200"),
        "{first}"
    );
    let second = tool_outputs(&requests[2].body).last().unwrap().clone();
    assert!(
        second.contains("hello") && second.contains("status=200"),
        "{second}"
    );
    assert_eq!(net.hits.load(Ordering::SeqCst), 2);

    let (_, asked) = turn(&mut s, &[ReviewDecision::Denied]).await;
    assert_eq!(asked, 1);
    let denied = last_outputs(&s).last().unwrap().clone();
    assert!(denied.contains("status=403"), "{denied}");
    assert!(
        denied.contains(&format!("network-access {HOST} denied")),
        "{denied}"
    );
    assert_eq!(
        net.hits.load(Ordering::SeqCst),
        2,
        "nothing reached the server"
    );
    s.runtime.stop();
}

/// An `exec_command` session gets its proxy too, alive as long as the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_command_session_reaches_an_approved_host_through_its_proxy() {
    let net = internet();
    let url = format!("http://{HOST}:{}/hello", net.port);
    let cmd = format!("curl -sS --max-time 20 -w '\\nstatus=%{{http_code}}' {url}");
    let call = serde_json::json!({"cmd": cmd, "login": false, "yield_time_ms": 20000});
    let mut s = setup_with(
        vec![
            MockResponse::tool_calls(vec![("e1", "exec_command", call.to_string())]),
            MockResponse::text("done"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        |settings| {
            proxied(settings);
            settings.tools.shell = ShellToolType::ExecCommand;
        },
    )
    .await;
    let (events, asked) = turn(&mut s, &[ReviewDecision::Approved]).await;
    assert_eq!(asked, 1);
    assert_eq!(
        network_asks(&events),
        vec![vec!["network-access".to_string(), HOST.to_string()]]
    );
    let output = &last_outputs(&s)[0];
    assert!(
        output.contains("hello") && output.contains("status=200"),
        "{output}"
    );
    assert_eq!(net.hits.load(Ordering::SeqCst), 1);
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_for_the_session_is_not_asked_again() {
    let net = internet();
    let url = format!("http://{HOST}:{}/", net.port);
    let mut s = setup_with(
        vec![
            curl("c1", &[], &url),
            MockResponse::text("one"),
            curl("c2", &[], &url),
            MockResponse::text("two"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        proxied,
    )
    .await;
    let (_, asked) = turn(&mut s, &[ReviewDecision::ApprovedForSession]).await;
    assert_eq!(asked, 1);
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    assert!(last_outputs(&s).last().unwrap().contains("status=200"));
    assert_eq!(net.hits.load(Ordering::SeqCst), 2);
    s.runtime.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_way_around_the_proxy_fails() {
    let net = internet();
    let direct = format!("http://127.0.0.1:{}/", net.port);
    let python = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {}), 5)\n    print('connected')\nexcept OSError as e:\n    print('refused', e)\ntry:\n    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n    print('netlink open')\nexcept OSError as e:\n    print('netlink refused', e)\n",
        net.port
    );
    let mut s = setup_with(
        vec![
            // Straight to the server, ignoring HTTP_PROXY.
            curl("c1", &["--noproxy", "*"], &direct),
            // A raw TCP connection, and a netlink socket to reconfigure the namespace.
            MockResponse::shell("c2", &["python3", "-c", &python]),
            MockResponse::text("done"),
        ],
        AskForApproval::Never,
        SandboxMode::WorkspaceWrite,
        None,
        proxied,
    )
    .await;
    let (_, asked) = turn(&mut s, &[]).await;
    assert_eq!(asked, 0);
    let requests = s.mock.requests();
    let curl_out = &tool_outputs(&requests[1].body)[0];
    assert!(curl_out.contains("status=000"), "{curl_out}");
    let python_out = tool_outputs(&requests[2].body).last().unwrap().clone();
    assert!(python_out.contains("refused"), "{python_out}");
    assert!(python_out.contains("netlink refused"), "{python_out}");
    assert_eq!(net.hits.load(Ordering::SeqCst), 0);
    s.runtime.stop();
}

/// `troupe exec` (which cannot ask anyone) with a PermissionRequest hook deciding.
fn exec_with_hook(decision: &str) -> (Harness, Internet, std::path::PathBuf, String) {
    let net = internet();
    let url = format!("http://{HOST}:{}/hello", net.port);
    let h = Harness::new(vec![curl("c1", &[], &url), MockResponse::text("done")]);
    let (saved, prefix) = capture(&h, "permission.jsonl");
    let answer = format!(
        r#"{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"{decision}"}}}}}}"#
    );
    let body = format!("{prefix}echo '{answer}'\n");
    let command = script(&h, "permission.sh", &body);
    add_hooks(
        &h,
        &format!(
            "[network_proxy]\nenabled = true\nhosts = {{ \"{HOST}\" = \"127.0.0.1\" }}\n\n{}",
            hook("PermissionRequest", Some("Bash"), &command, 10)
        ),
    );
    let out = h.exec_under("workspace-write", "on-request", &["fetch it"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let output = tool_outputs(&h.mock.requests()[1].body)
        .last()
        .unwrap()
        .clone();
    (h, net, saved, output)
}

#[test]
fn a_permission_request_hook_allows_or_denies_the_host() {
    let (_h, net, saved, output) = exec_with_hook("allow");
    assert!(
        output.contains("hello") && output.contains("status=200"),
        "{output}"
    );
    assert_eq!(net.hits.load(Ordering::SeqCst), 1);
    let payloads = captured(&saved);
    assert_eq!(payloads.len(), 1, "{payloads:?}");
    assert_eq!(payloads[0]["tool_name"], "Bash");
    assert_eq!(
        payloads[0]["tool_input"]["description"],
        format!("network-access {HOST}")
    );
    assert!(payloads[0]["tool_input"]["command"]
        .as_str()
        .unwrap()
        .starts_with("curl -sS"));

    let (_h, net, _, output) = exec_with_hook("deny");
    assert!(output.contains("status=403"), "{output}");
    assert_eq!(net.hits.load(Ordering::SeqCst), 0);
}

/// A script that asks the proxy (`HTTP_PROXY`) for each `host` of `hosts` on `port`, by
/// CONNECT and by plain http, and prints `METHOD HOST STATUS` per request.
fn probe_script(hosts: &[&str], port: u16) -> String {
    format!(
        r#"import os, socket
proxy = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1].strip("/"))
for host in {hosts:?}:
    for method, head in (("CONNECT", "CONNECT %s:{port} HTTP/1.1\r\nHost: x\r\n\r\n" % host),
                         ("GET", "GET http://%s:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n" % host)):
        s = socket.create_connection(("127.0.0.1", proxy), 20)
        s.sendall(head.encode())
        answer = s.recv(4096).decode(errors="replace")
        s.close()
        print(method, host, answer.split("\r\n")[0].split(" ")[1], answer.split("\r\n\r\n", 1)[-1].strip())
"#
    )
}

/// `troupe exec` with every network-access question allowed by a PermissionRequest hook and
/// `extra` in `[network_proxy]`, running `script`; the command's output.
fn exec_probe(extra: &str, script_text: &str) -> String {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["python3", "-c", script_text]),
        MockResponse::text("done"),
    ]);
    let answer = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;
    let command = script(&h, "permission.sh", &format!("echo '{answer}'\n"));
    add_hooks(
        &h,
        &format!(
            "[network_proxy]\nenabled = true\n{extra}\n\n{}",
            hook("PermissionRequest", Some("Bash"), &command, 10)
        ),
    );
    let out = h.exec_under("workspace-write", "on-request", &["probe"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let raw = tool_outputs(&h.mock.requests()[1].body)
        .last()
        .unwrap()
        .clone();
    // The shell tool's output is `{"output": …, "metadata": …}`.
    serde_json::from_str::<serde_json::Value>(&raw)
        .ok()
        .and_then(|v| v["output"].as_str().map(str::to_string))
        .unwrap_or(raw)
}

/// Approving a name is not approving the host's own services: `localhost` and every
/// spelling of a loopback, unspecified or mapped address are refused after the approval,
/// by CONNECT and by plain http, and nothing reaches the loopback server.
#[test]
fn an_approved_name_on_the_hosts_loopback_is_refused() {
    let net = internet();
    let spellings = [
        "localhost",
        "127.0.0.1",
        "127.1",
        "2130706433",
        "0177.0.0.1",
        "0x7f000001",
        "0x7f.0.0.1",
        "0.0.0.0",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::]",
    ];
    let output = exec_probe("", &probe_script(&spellings, net.port));
    for host in spellings {
        for method in ["CONNECT", "GET"] {
            let line = output
                .lines()
                .find(|l| l.starts_with(&format!("{method} {host} ")))
                .unwrap_or_else(|| panic!("no answer for {method} {host}: {output}"));
            assert!(line.contains(" 403 "), "{line}\n{output}");
            assert!(line.contains("allow_local_names"), "{line}");
        }
    }
    assert_eq!(net.hits.load(Ordering::SeqCst), 0, "{output}");
}

/// A name the user lists in `allow_local_names` reaches the loopback server; another spelling
/// of the same address still does not.
#[test]
fn a_name_allowed_by_config_reaches_the_loopback() {
    let net = internet();
    let output = exec_probe(
        "allow_local_names = [\"LocalHost\"]",
        &probe_script(&["localhost", "127.1"], net.port),
    );
    assert!(output.contains("CONNECT localhost 200"), "{output}");
    assert!(output.contains("GET localhost 200"), "{output}");
    assert!(output.contains("CONNECT 127.1 403"), "{output}");
    assert!(output.contains("GET 127.1 403"), "{output}");
    // The tunnel opened (its client sent nothing) and the plain request was answered.
    assert_eq!(net.hits.load(Ordering::SeqCst), 2, "{output}");
}
