//! `troupe acp` driven by an editor on the official ACP SDK (`tests/acp/client.mjs`, Node)
//! and by raw JSON lines: sessions, streamed tool calls, permissions, cancel, load, the
//! editor's files, modes, bad input, stdin EOF.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use troupe_mock_model::{events, MockResponse};
use troupe_test_support::{troupe_exe, Harness, KEY_VAR};

#[path = "acp_editor.rs"]
mod editor;

fn acp_tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/acp")
}

/// Runs the SDK client's `scenario` against `troupe acp ARGS…` and returns what it printed.
fn run_client(harness: &Harness, scenario: &str, args: &[&str]) -> Value {
    run_client_with(harness, scenario, args, json!([]))
}

/// [`run_client`], the editor giving `mcp_servers` to its session.
fn run_client_with(harness: &Harness, scenario: &str, args: &[&str], mcp_servers: Value) -> Value {
    run_client_full(harness, scenario, args, mcp_servers, &[])
}

/// [`run_client`] with more variables in the client's environment.
fn run_client_env(harness: &Harness, scenario: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    run_client_full(harness, scenario, args, json!([]), env)
}

fn run_client_full(
    harness: &Harness,
    scenario: &str,
    args: &[&str],
    mcp_servers: Value,
    env: &[(&str, &str)],
) -> Value {
    assert!(
        acp_tests_dir()
            .join("node_modules/@agentclientprotocol/sdk/package.json")
            .is_file(),
        "the ACP SDK is missing: run scripts/install-test-deps (npm ci in tests/acp)"
    );
    let output = Command::new("node")
        .arg(acp_tests_dir().join("client.mjs"))
        .arg(scenario)
        .env("TROUPE_EXE", troupe_exe())
        .env("TROUPE_HOME", harness.home.path())
        .env(KEY_VAR, "test-key")
        .env("ACP_CWD", harness.workdir.path())
        .env("ACP_ARGS", json!(args).to_string())
        .env("ACP_MCP_SERVERS", mcp_servers.to_string())
        .envs(env.iter().copied())
        .current_dir(harness.workdir.path())
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client prints JSON")
}

const FULL_ACCESS: [&str; 4] = [
    "-c",
    "approval_policy=\"never\"",
    "-c",
    "sandbox_mode=\"danger-full-access\"",
];

fn updates<'a>(seen: &'a Value, kind: &str) -> Vec<&'a Value> {
    seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

fn call_updates<'a>(seen: &'a Value, id: &str) -> Vec<&'a Value> {
    seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["update"])
        .filter(|u| u["toolCallId"] == id)
        .collect()
}

fn message_text(seen: &Value) -> String {
    updates(seen, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// The title a tool call ends with: its `tool_call`'s, or a later update's.
fn last_title(updates: &[&Value]) -> String {
    updates
        .iter()
        .filter_map(|u| u["title"].as_str())
        .next_back()
        .unwrap_or_default()
        .to_string()
}

fn shell_args(script: &str) -> String {
    json!({"command": ["bash", "-lc", script]}).to_string()
}

fn patch_call(call_id: &str, patch: &str) -> MockResponse {
    MockResponse::sse(vec![
        events::created("resp_patch"),
        events::custom_tool_call_done(call_id, "apply_patch", patch),
        events::completed("resp_patch", 10, 0, 5, 0),
    ])
}

#[test]
fn a_turn_streams_three_commands_and_a_patch_as_tool_calls() {
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![
            ("s1", "shell", shell_args("echo one")),
            ("s2", "shell", shell_args("echo two")),
            ("s3", "shell", shell_args("echo three")),
        ]),
        patch_call(
            "p1",
            "*** Begin Patch\n*** Add File: added.txt\n+hello\n*** End Patch\n",
        ),
        MockResponse::text("all done"),
    ]);
    let seen = run_client(&harness, "turn", &FULL_ACCESS);
    assert_eq!(seen["init"]["protocolVersion"], 1);
    assert_eq!(seen["init"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(seen["session"]["modes"]["currentModeId"], "default");
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    for (id, word) in [("s1", "one"), ("s2", "two"), ("s3", "three")] {
        let calls = call_updates(&seen, id);
        let start = calls[0];
        assert_eq!(start["sessionUpdate"], "tool_call", "{calls:?}");
        assert_eq!(start["kind"], "execute");
        assert_eq!(start["title"], format!("echo {word}"));
        assert_eq!(start["status"], "in_progress");
        let end = calls.last().unwrap();
        assert_eq!(end["status"], "completed", "{calls:?}");
        let output = end["content"][0]["content"]["text"].as_str().unwrap();
        assert!(output.contains(word), "{output}");
    }
    let patch = call_updates(&seen, "p1");
    assert_eq!(patch[0]["sessionUpdate"], "tool_call");
    assert_eq!(patch[0]["kind"], "edit");
    let diff = &patch[0]["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["newText"], "hello\n");
    assert!(diff["path"].as_str().unwrap().ends_with("added.txt"));
    assert_eq!(patch.last().unwrap()["status"], "completed");
    // Without the fs capability Troupe writes the disk itself.
    assert_eq!(
        std::fs::read_to_string(harness.workdir.path().join("added.txt")).unwrap(),
        "hello\n"
    );
    assert!(seen["writes"].as_array().unwrap().is_empty());
    assert_eq!(message_text(&seen), "all done");
    let commands = updates(&seen, "available_commands_update");
    assert_eq!(commands[0]["availableCommands"][0]["name"], "compact");
}

#[test]
fn permissions_are_asked_and_a_rejected_command_never_runs() {
    let harness = Harness::new(vec![
        MockResponse::shell("s1", &["touch", "allowed.txt"]),
        MockResponse::shell("s2", &["touch", "rejected.txt"]),
        MockResponse::text("asked twice"),
    ]);
    let seen = run_client(
        &harness,
        "permissions",
        &[
            "-c",
            "approval_policy=\"untrusted\"",
            "-c",
            "sandbox_mode=\"danger-full-access\"",
        ],
    );
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    let asked = seen["permissions"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "s1");
    assert_eq!(asked[1]["toolCall"]["toolCallId"], "s2");
    let options: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);
    assert!(harness.workdir.path().join("allowed.txt").exists());
    assert!(!harness.workdir.path().join("rejected.txt").exists());
    assert_eq!(
        call_updates(&seen, "s2").last().unwrap()["status"],
        "failed"
    );
}

#[test]
fn cancel_stops_the_turn_and_kills_its_command() {
    let harness = Harness::new(vec![
        MockResponse::shell("s1", &["bash", "-c", "echo $$ > pid; exec sleep 60"]),
        MockResponse::text("never asked"),
    ]);
    let started = Instant::now();
    let seen = run_client(&harness, "cancel", &FULL_ACCESS);
    assert_eq!(seen["prompt"]["stopReason"], "cancelled");
    assert_eq!(
        seen["deadBeforeClose"], true,
        "the command outlived the cancel"
    );
    assert!(started.elapsed() < Duration::from_secs(50));
    let pid = seen["pid"].as_u64().unwrap();
    assert!(pid > 1);
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the command {pid} outlived the cancel"
    );
    assert_eq!(harness.mock.requests().len(), 1);
}

#[test]
fn load_replays_an_earlier_session_and_continues_it() {
    let harness = Harness::new(vec![
        MockResponse::text("the first answer"),
        MockResponse::text("the second answer"),
    ]);
    let seen = run_client(&harness, "load", &FULL_ACCESS);
    assert_eq!(seen["init"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(seen["loaded"]["modes"]["currentModeId"], "default");
    let replayed: Vec<(String, String)> = seen["replayed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["sessionId"] == seen["sessionId"])
        .filter_map(|n| {
            Some((
                n["update"]["sessionUpdate"].as_str()?.to_string(),
                n["update"]["content"]["text"].as_str()?.to_string(),
            ))
        })
        .collect();
    assert_eq!(
        replayed,
        [
            (
                "user_message_chunk".to_string(),
                "the first question".to_string()
            ),
            (
                "agent_message_chunk".to_string(),
                "the first answer".to_string()
            ),
        ]
    );
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    // The model saw the whole conversation on the second prompt.
    let requests = harness.mock.requests();
    let body = requests.last().unwrap().body.to_string();
    assert!(body.contains("the first answer") && body.contains("the second question"));
}

#[test]
fn load_reattaches_the_sessions_sub_agents_without_the_index() {
    use crate::subagents_support::{call, spawn_call, wait_call};
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "a1",
            "counter",
            "child-marker: count things",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
        // After the load: the model asks which agents its thread has.
        MockResponse::tool_calls(vec![call("l1", "list_agents", json!({}))]),
        MockResponse::text("listed"),
    ]);
    harness.mock.route(
        "child-marker",
        vec![
            MockResponse::shell("c1", &["echo", "from-child"]),
            MockResponse::text("child done"),
        ],
    );
    // The first server runs the turn and stops; a second one loads the session.
    let seen = run_client(&harness, "load", &FULL_ACCESS);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn", "{seen}");
    let agent: Vec<&Value> = seen["replayed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["update"])
        .filter(|u| {
            u["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with("agent-"))
        })
        .collect();
    assert!(
        !agent.is_empty(),
        "no sub-agent replayed: {}",
        seen["replayed"]
    );
    assert_eq!(agent[0]["sessionUpdate"], "tool_call", "{agent:?}");
    assert!(last_title(&agent).contains("count things"), "{agent:?}");
    let log: String = agent
        .iter()
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .collect();
    assert!(
        log.contains("$ echo from-child") && log.contains("child done"),
        "{log}"
    );
    assert_eq!(agent.last().unwrap()["status"], "completed");
    // The loaded root's tree holds its agent again: `list_agents` names it.
    let body = harness.mock.requests().last().unwrap().body.clone();
    let outputs = troupe_test_support::tool_outputs(&body);
    let listed = outputs.last().unwrap();
    assert!(
        listed.contains("\"task_name\":\"/root/counter\"")
            && listed.contains("\"status\":\"completed\""),
        "{listed}"
    );
    // Neither server opened the thread index.
    assert!(!harness.home.path().join("state").exists());
}

#[test]
fn two_sessions_run_at_once() {
    let harness = Harness::new(vec![MockResponse::text("same"), MockResponse::text("same")]);
    let seen = run_client(&harness, "two-sessions", &FULL_ACCESS);
    assert_ne!(seen["a"], seen["b"]);
    assert_eq!(seen["pa"]["stopReason"], "end_turn");
    assert_eq!(seen["pb"]["stopReason"], "end_turn");
    for id in [&seen["a"], &seen["b"]] {
        let said: String = seen["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| {
                &n["sessionId"] == id && n["update"]["sessionUpdate"] == "agent_message_chunk"
            })
            .map(|n| n["update"]["content"]["text"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(said, "same");
    }
}

#[test]
fn with_the_fs_capability_patches_read_and_write_through_the_editor() {
    let harness = Harness::new(vec![
        patch_call(
            "p1",
            "*** Begin Patch\n*** Update File: notes.txt\n@@\n-buffer line\n+patched line\n*** End Patch\n",
        ),
        MockResponse::text("patched"),
    ]);
    let notes = harness.workdir.path().join("notes.txt");
    std::fs::write(&notes, "disk line\n").unwrap();
    let seen = run_client(&harness, "fs", &FULL_ACCESS);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    let notes_path = notes.canonicalize().unwrap().display().to_string();
    assert_eq!(seen["reads"], json!([notes_path]));
    assert_eq!(
        seen["writes"],
        json!([{"path": notes_path, "content": "patched line\n"}])
    );
    // The editor holds the file: Troupe never wrote it.
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "disk line\n");
    assert_eq!(
        call_updates(&seen, "p1").last().unwrap()["status"],
        "completed"
    );
}

#[test]
fn modes_are_troupes_collaboration_modes() {
    let harness = Harness::new(vec![]);
    let seen = run_client(&harness, "modes", &FULL_ACCESS);
    let ids: Vec<&str> = seen["session"]["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["default", "plan"]);
    assert_eq!(
        updates(&seen, "current_mode_update")[0]["currentModeId"],
        "plan"
    );
    assert_eq!(seen["refused"]["code"], -32602);
}

/// `troupe acp` on raw pipes.
struct RawAcp {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl RawAcp {
    fn start(harness: &Harness, args: &[&str]) -> Self {
        let mut child = harness
            .command()
            .arg("acp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(serde_json::from_str(&line).expect("every line is JSON"));
            }
        });
        Self { child, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("an answer")
    }
}

#[test]
fn bad_input_gets_json_rpc_errors_and_the_server_goes_on() {
    let harness = Harness::new(vec![]);
    let mut acp = RawAcp::start(&harness, &[]);
    acp.send("this is not json");
    let answer = acp.next();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    acp.send(r#"{"jsonrpc":"2.0","id":1,"method":"nosuch/method","params":{}}"#);
    let answer = acp.next();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], -32601);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nosuch/method"));
    acp.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":123}}"#);
    let answer = acp.next();
    assert_eq!(answer["error"]["code"], -32602);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("session/new") && message.contains("invalid type"),
        "{message}"
    );
    acp.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}"#);
    let answer = acp.next();
    assert_eq!(answer["error"]["code"], -32602);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("absolute"));
    // A cancel for no session is a notification: nothing to answer, nothing stops.
    acp.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}"#);
    acp.send(r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}"#);
    let answer = acp.next();
    assert_eq!(answer["id"], 4);
    assert_eq!(answer["error"]["code"], -32002);
    acp.send(r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"video"}]}}"#);
    let answer = acp.next();
    assert_eq!(answer["error"]["code"], -32602);
    acp.send(r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":7}}"#);
    let answer = acp.next();
    assert_eq!(answer["id"], 6);
    assert_eq!(answer["result"]["protocolVersion"], 1);
    assert_eq!(answer["result"]["authMethods"], json!([]));
    // stdin closed: the server ends by itself.
    drop(acp.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = acp.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "troupe acp did not exit on stdin EOF"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_ends_the_running_turn_and_its_command() {
    let harness = Harness::new(vec![MockResponse::shell(
        "s1",
        &["bash", "-c", "echo $$ > pid; exec sleep 60"],
    )]);
    let mut acp = RawAcp::start(&harness, &FULL_ACCESS);
    acp.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#);
    assert_eq!(acp.next()["result"]["protocolVersion"], 1);
    let cwd = harness.workdir.path().display().to_string();
    acp.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})
            .to_string(),
    );
    let session = acp.next()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    acp.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "sleep"}]}})
        .to_string(),
    );
    let pid_file = harness.workdir.path().join("pid");
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let killed = Command::new("kill")
        .args(["-TERM", &acp.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = acp.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "troupe acp did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(143));
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the command {pid} outlived the server"
    );
    // The turn's end is recorded: the rollout says it was aborted.
    let rollouts = harness.rollouts();
    let text = std::fs::read_to_string(&rollouts[0]).unwrap();
    assert!(text.contains("turn_aborted"), "{text}");
}

#[test]
fn the_editor_is_never_asked_to_write_outside_the_writable_roots() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+planted\n*** Update File: notes.txt\n@@\n-buffer line\n+patched line\n*** End Patch\n",
        target.display()
    );
    let harness = Harness::new(vec![
        patch_call("p1", &patch),
        MockResponse::text("refused"),
    ]);
    std::fs::write(harness.workdir.path().join("notes.txt"), "disk line\n").unwrap();
    let seen = run_client(
        &harness,
        "fs",
        &[
            "-c",
            "approval_policy=\"never\"",
            "-c",
            "sandbox_mode=\"workspace-write\"",
            // The work dir is the only writable root (the temp dirs are writable by default).
            "-c",
            "sandbox_workspace_write.exclude_slash_tmp=true",
            "-c",
            "sandbox_workspace_write.exclude_tmpdir_env_var=true",
        ],
    );
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    // Troupe refused the patch itself: the editor wrote nothing, and nothing reached the disk.
    assert_eq!(seen["writes"], json!([]), "{seen}");
    assert!(!target.exists());
    // A refused patch never began (as in every frontend, only the model hears why).
    assert!(call_updates(&seen, "p1").is_empty(), "{seen}");
    let request = harness.mock.requests().last().unwrap().body.to_string();
    assert!(!request.contains("Success."), "{request}");
}

#[test]
fn a_sub_agent_is_one_tool_call_with_its_own_updates() {
    use crate::subagents_support::{spawn_call, wait_call};
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "a1",
            "counter",
            "child-marker: count things",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ]);
    harness.mock.route(
        "child-marker",
        vec![
            MockResponse::shell("c1", &["echo", "from-child"]),
            MockResponse::text("child done"),
        ],
    );
    let seen = run_client(&harness, "turn", &FULL_ACCESS);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    let agent: Vec<&Value> = seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["update"])
        .filter(|u| {
            u["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with("agent-"))
        })
        .collect();
    assert_eq!(agent[0]["sessionUpdate"], "tool_call", "{agent:?}");
    assert_eq!(agent[0]["kind"], "think");
    assert!(last_title(&agent).contains("count things"), "{agent:?}");
    let log: String = agent
        .iter()
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .collect();
    assert!(
        log.contains("$ echo from-child") && log.contains("child done"),
        "{log}"
    );
    assert_eq!(agent.last().unwrap()["status"], "completed");
    assert!(message_text(&seen).contains("root done"));
}

#[test]
fn cancel_reaches_the_sub_agents_and_their_commands() {
    use crate::subagents_support::{spawn_call, wait_call};
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "a1",
            "sleeper",
            "sleeper-marker: sleep",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("never"),
    ]);
    harness.mock.route(
        "sleeper-marker",
        vec![
            MockResponse::shell("c1", &["bash", "-c", "echo $$ > pid; exec sleep 60"]),
            MockResponse::text("never"),
        ],
    );
    let seen = run_client(&harness, "cancel", &FULL_ACCESS);
    assert_eq!(seen["prompt"]["stopReason"], "cancelled");
    assert_eq!(
        seen["deadBeforeClose"], true,
        "the child's command outlived the cancel"
    );
    let pid = seen["pid"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            Instant::now() < deadline,
            "the child's command {pid} outlived the cancel"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_editors_mcp_servers_serve_that_session() {
    let harness = Harness::new(vec![MockResponse::text("tools seen")]);
    let server = crate::mcp_support::hostile_server();
    let seen = run_client_with(
        &harness,
        "turn",
        &FULL_ACCESS,
        json!([{"name": "editor tools", "command": "python3", "args": [server], "env": []}]),
    );
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    let requests = harness.mock.requests();
    let names = crate::mcp_support::tool_names(&requests[0].body);
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("mcp__editor_tools__") && n.ends_with("big")),
        "{names:?}"
    );
}

#[test]
fn update_plan_is_an_acp_plan_and_reasoning_streams_as_thoughts() {
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![(
            "u1",
            "update_plan",
            json!({"plan": [
                {"step": "read the code", "status": "completed"},
                {"step": "fix it", "status": "in_progress"},
            ]})
            .to_string(),
        )]),
        MockResponse::sse(vec![
            events::created("resp_think"),
            events::reasoning_summary_delta("r1", "thinking hard"),
            events::reasoning_done("r1", "thinking hard"),
            events::assistant_message_done("m1", "planned"),
            events::completed("resp_think", 10, 0, 5, 0),
        ]),
    ]);
    let seen = run_client(&harness, "turn", &FULL_ACCESS);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn");
    let plan = updates(&seen, "plan");
    assert_eq!(
        plan[0]["entries"],
        json!([
            {"content": "read the code", "priority": "medium", "status": "completed"},
            {"content": "fix it", "priority": "medium", "status": "in_progress"},
        ])
    );
    let thoughts: String = updates(&seen, "agent_thought_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(thoughts, "thinking hard");
    assert_eq!(message_text(&seen), "planned");
}
