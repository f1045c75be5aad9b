//! MCP servers used from a model turn, through the real binary and the runtime: real npm
//! servers (`server-everything`, `server-filesystem`) listed and called, approvals, servers
//! that fail to start, a server killed mid-session, a hostile server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::approval_support::{last_outputs, setup_with, turn};
use crate::mcp_support::{hostile_server, lit, npm_server, tool_names};
use std::collections::BTreeMap;
use troupe_messages::events::EventMsg;
use troupe_messages::mcp::{McpServerSettings, McpToolApproval, McpTransport};
use troupe_messages::ops::ReviewDecision;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, stdout, tool_outputs, Harness};

fn everything_config(extra: &str) -> String {
    format!(
        "\n[mcp_servers.everything]\ncommand = {}\nstartup_timeout_sec = 60\n{extra}\n",
        lit(&npm_server("mcp-server-everything"))
    )
}

#[test]
fn a_model_turn_lists_and_calls_tools_of_real_servers() {
    let harness = Harness::with_config(
        vec![
            MockResponse::tool_calls(vec![
                ("c1", "mcp__everything__echo", r#"{"message":"hello mcp"}"#),
                (
                    "c2",
                    "mcp__filesystem__read_text_file",
                    r#"{"path":"note.txt"}"#,
                ),
            ]),
            MockResponse::text("done"),
        ],
        "",
    );
    let file = harness.workdir.path().join("note.txt");
    std::fs::write(&file, "contents from the filesystem server").unwrap();
    // A relative path resolves against the server's cwd: troupe's, the workdir.
    let config_path = harness.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    config.push_str(&everything_config(
        "default_tools_approval_mode = \"approve\"",
    ));
    config.push_str(&format!(
        "\n[mcp_servers.filesystem]\ncommand = {}\nargs = [{}]\nstartup_timeout_sec = 60\n\
         default_tools_approval_mode = \"approve\"\n",
        lit(&npm_server("mcp-server-filesystem")),
        lit(&harness.workdir.path().display().to_string()),
    ));
    std::fs::write(&config_path, config).unwrap();

    let out = harness.exec(&["--json", "use the tools"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = harness.mock.requests();
    let offered = tool_names(&requests[0].body);
    assert!(
        offered.contains(&"mcp__everything__echo".to_string()),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"mcp__filesystem__read_text_file".to_string()),
        "{offered:?}"
    );
    assert!(offered.iter().all(|name| name.len() <= 64));
    let outputs = tool_outputs(&requests[1].body);
    assert!(outputs[0].contains("hello mcp"), "{outputs:?}");
    assert!(
        outputs[1].contains("contents from the filesystem server"),
        "{outputs:?}"
    );
}

#[test]
fn servers_that_cannot_start_are_warnings_and_the_turn_goes_on() {
    let harness = Harness::with_config(vec![MockResponse::text("still here")], "");
    let config_path = harness.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    config.push_str(
        "\n[mcp_servers.missing]\ncommand = \"/nonexistent/troupe-no-such-mcp-server\"\n\
         \n[mcp_servers.exits]\ncommand = \"sh\"\nargs = [\"-c\", \"exit 3\"]\n\
         \n[mcp_servers.garbage]\ncommand = \"sh\"\nargs = [\"-c\", \"echo 'not json at all'; sleep 30\"]\nstartup_timeout_sec = 2\n\
         \n[mcp_servers.hangs]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_sec = 1\n",
    );
    std::fs::write(&config_path, config).unwrap();
    let started = std::time::Instant::now();
    let out = harness.exec(&["hello"]);
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert!(stdout(&out).contains("still here"));
    for server in ["missing", "exits", "garbage", "hangs"] {
        assert!(
            err.contains(&format!("MCP server `{server}` is not available")),
            "{server}: {err}"
        );
    }
    assert!(err.contains("startup_timeout_sec"), "{err}");
    // In parallel: about the slowest deadline, not the sum.
    assert!(started.elapsed().as_secs() < 15, "{:?}", started.elapsed());
}

#[test]
fn a_hostile_server_gets_bounded_names_and_results() {
    let (named, _) = troupe_mcp::names::name_tools(vec![troupe_mcp::names::RawToolName {
        server: "hostile".into(),
        tool: "big".into(),
    }]);
    let big = named[0].model_name.clone();
    let harness = Harness::with_config(
        vec![
            MockResponse::tool_calls(vec![("c1", big.as_str(), "{}")]),
            MockResponse::text("ok"),
        ],
        &format!(
            "\n[mcp_servers.hostile]\ncommand = \"python3\"\nargs = [{}]\n",
            lit(&hostile_server())
        ),
    );
    let out = harness.exec(&["go"]);
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert!(err.contains("lists the tool `dup` more than once"), "{err}");
    let requests = harness.mock.requests();
    let offered = tool_names(&requests[0].body);
    let mcp: Vec<&String> = offered.iter().filter(|n| n.starts_with("mcp__")).collect();
    assert_eq!(mcp.len(), 4, "{mcp:?}");
    for name in &mcp {
        assert!(name.len() <= 64, "{name}");
        assert!(
            name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "{name:?}"
        );
    }
    let output = &tool_outputs(&requests[1].body)[0];
    assert!(output.len() < 200_000, "{}", output.len());
    assert!(
        output.starts_with("BAAA") && output.ends_with("AAAZ"),
        "head and tail kept"
    );
}

fn everything_settings(mode: McpToolApproval, marker: &str) -> BTreeMap<String, McpServerSettings> {
    // `sh` stays the parent (a command follows), so the marker finds the server's tree.
    let script = format!("{} ; : {marker}", npm_server("mcp-server-everything"));
    let mut servers = BTreeMap::new();
    servers.insert(
        "everything".to_string(),
        McpServerSettings {
            transport: McpTransport::Stdio {
                command: "sh".into(),
                args: vec!["-c".into(), script],
                env: BTreeMap::new(),
                env_vars: Vec::new(),
                cwd: None,
            },
            enabled: true,
            startup_timeout_ms: 60_000,
            tool_timeout_ms: 30_000,
            default_tools_approval_mode: mode,
            tool_approval_modes: BTreeMap::new(),
            enabled_tools: Some(vec!["echo".into()]),
            disabled_tools: Vec::new(),
            oauth_credentials_file: None,
        },
    );
    servers
}

fn echo(call_id: &str, text: &str) -> MockResponse {
    let args = serde_json::json!({ "message": text }).to_string();
    MockResponse::tool_calls(vec![(call_id, "mcp__everything__echo", args)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_asks_for_approval_and_a_denial_keeps_it_from_running() {
    let marker = format!("troupe-mcp-approval-{}", std::process::id());
    let mut s = setup_with(
        vec![
            echo("c1", "first"),
            MockResponse::text("denied"),
            echo("c2", "second"),
            MockResponse::text("approved"),
        ],
        AskForApproval::OnRequest,
        SandboxMode::WorkspaceWrite,
        None,
        |settings| settings.mcp_servers = everything_settings(McpToolApproval::Prompt, &marker),
    )
    .await;
    let (events, asked) = turn(&mut s, &[ReviewDecision::Denied]).await;
    assert_eq!(asked, 1);
    let request = events
        .iter()
        .find_map(|e| match e {
            EventMsg::ExecApprovalRequest {
                command, reason, ..
            } => Some((command, reason)),
            _ => None,
        })
        .unwrap();
    assert_eq!(request.0[0], "mcp__everything__echo");
    assert!(request.0[1].contains("first"));
    assert!(request.1.as_deref().unwrap().contains("MCP tool `echo`"));
    assert!(!events
        .iter()
        .any(|e| matches!(e, EventMsg::McpToolCallBegin { .. })));
    assert!(
        last_outputs(&s)[0].contains("rejected by user"),
        "{:?}",
        last_outputs(&s)
    );

    let (events, asked) = turn(&mut s, &[ReviewDecision::Approved]).await;
    assert_eq!(asked, 1);
    assert!(events
        .iter()
        .any(|e| matches!(e, EventMsg::McpToolCallEnd { success: true, .. })));
    assert!(
        last_outputs(&s).last().unwrap().contains("Echo: second"),
        "{:?}",
        last_outputs(&s)
    );
}

fn pids_of(marker: &str) -> Vec<String> {
    let out = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_session_is_restarted_on_next_use() {
    let marker = format!("troupe-mcp-restart-{}", std::process::id());
    let mut s = setup_with(
        vec![
            echo("c1", "before"),
            MockResponse::text("one"),
            echo("c2", "after"),
            MockResponse::text("two"),
        ],
        AskForApproval::Never,
        SandboxMode::DangerFullAccess,
        None,
        |settings| settings.mcp_servers = everything_settings(McpToolApproval::Approve, &marker),
    )
    .await;
    turn(&mut s, &[]).await;
    assert!(
        last_outputs(&s)[0].contains("before"),
        "{:?}",
        last_outputs(&s)
    );
    let first = pids_of(&marker);
    assert_eq!(first.len(), 1, "one server for the thread: {first:?}");
    // Kill the launcher and the server under it.
    let children = std::process::Command::new("pgrep")
        .args(["-P", &first[0]])
        .output()
        .unwrap();
    for pid in String::from_utf8_lossy(&children.stdout)
        .split_whitespace()
        .chain([first[0].as_str()])
    {
        std::process::Command::new("kill")
            .args(["-9", pid])
            .status()
            .unwrap();
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;

    turn(&mut s, &[]).await;
    assert!(
        last_outputs(&s).last().unwrap().contains("Echo: after"),
        "{:?}",
        last_outputs(&s)
    );
    let second = pids_of(&marker);
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(first, second, "a new server process");
}
