//! MCP through `troupe exec`: the resource tools (Codex's specs and payloads, against
//! server-everything), `--json`'s `mcp_tool_call` items, and an interrupted turn telling the
//! server its call is cancelled (`notifications/cancelled`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::{hostile_server, lit, npm_server};
use std::process::Stdio;
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, tool_outputs, Harness};

fn with_everything(harness: &Harness) {
    let config_path = harness.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.everything]\ncommand = {}\nstartup_timeout_sec = 60\n\
         default_tools_approval_mode = \"approve\"\n",
        lit(&npm_server("mcp-server-everything"))
    ));
    std::fs::write(&config_path, config).unwrap();
}

const DOC: &str = "demo://resource/static/document/architecture.md";

#[test]
fn resources_are_listed_and_read_with_codex_s_tools_and_payloads() {
    let read = serde_json::json!({"server": "everything", "uri": DOC}).to_string();
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![
            ("c1", "list_mcp_resources", "{}"),
            (
                "c2",
                "list_mcp_resource_templates",
                r#"{"server":"everything"}"#,
            ),
            ("c3", "read_mcp_resource", read.as_str()),
            ("c4", "list_mcp_resources", r#"{"cursor":"x"}"#),
            ("c5", "read_mcp_resource", r#"{"server":"nope","uri":"x"}"#),
        ]),
        MockResponse::text("done"),
    ]);
    with_everything(&harness);
    let out = harness.exec(&["--json", "read the docs"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = harness.mock.requests();
    // Offered with Codex 0.169's specs (recorded from its first request).
    let tools = requests[0].body["tools"].as_array().unwrap();
    let spec = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} offered"))
            .clone()
    };
    assert_eq!(
        spec("read_mcp_resource")["parameters"]["required"],
        serde_json::json!(["server", "uri"])
    );
    assert_eq!(
        spec("list_mcp_resources")["parameters"]["additionalProperties"],
        false
    );
    spec("list_mcp_resource_templates");

    let outputs = tool_outputs(&requests[1].body);
    let listed: serde_json::Value = serde_json::from_str(&outputs[0]).unwrap();
    let first = &listed["resources"][0];
    assert_eq!(first["server"], "everything", "{listed}");
    assert!(listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["uri"] == DOC));
    let templates: serde_json::Value = serde_json::from_str(&outputs[1]).unwrap();
    assert_eq!(templates["server"], "everything");
    assert!(templates["resourceTemplates"][0]["uriTemplate"]
        .as_str()
        .unwrap()
        .contains("{resourceId}"));
    let doc: serde_json::Value = serde_json::from_str(&outputs[2]).unwrap();
    assert_eq!(doc["uri"], DOC);
    assert!(doc["contents"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Architecture"));
    assert!(outputs[3].contains("cursor"), "{}", outputs[3]);
    assert!(
        outputs[4].contains("no enabled MCP server `nope`"),
        "{}",
        outputs[4]
    );

    // Each shows in `--json` as an mcp_tool_call item, as in Codex.
    let lines = json_lines(&out);
    let done: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["type"] == "item.completed" && l["item"]["type"] == "mcp_tool_call")
        .collect();
    assert_eq!(done.len(), 5, "{lines:?}");
    // Resource calls run in parallel: find each by what it asked.
    let find = |tool: &str, arguments: serde_json::Value| {
        done.iter()
            .find(|l| l["item"]["tool"] == tool && l["item"]["arguments"] == arguments)
            .unwrap_or_else(|| panic!("{tool} {arguments}: {done:?}"))["item"]
            .clone()
    };
    let all = find("list_mcp_resources", serde_json::json!({}));
    assert_eq!(all["server"], "troupe");
    assert_eq!(all["status"], "completed");
    let read = find(
        "read_mcp_resource",
        serde_json::json!({"server": "everything", "uri": DOC}),
    );
    assert_eq!(read["server"], "everything");
    assert_eq!(read["status"], "completed");
    assert!(read["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Architecture"));
    let nope = find(
        "read_mcp_resource",
        serde_json::json!({"server": "nope", "uri": "x"}),
    );
    assert_eq!(nope["status"], "failed");
    assert!(nope["result"].is_null());
    assert!(nope["error"]["message"].as_str().unwrap().contains("nope"));
}

#[test]
fn exec_json_shows_an_mcp_call_as_codex_s_mcp_tool_call_item() {
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![(
            "c1",
            "mcp__everything__echo",
            r#"{"message":"hello items"}"#,
        )]),
        MockResponse::text("done"),
    ]);
    with_everything(&harness);
    let out = harness.exec(&["--json", "echo"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let lines = json_lines(&out);
    let items: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["item"]["type"] == "mcp_tool_call")
        .collect();
    assert_eq!(items.len(), 2, "{lines:?}");
    let started = items[0];
    assert_eq!(started["type"], "item.started");
    assert_eq!(
        started["item"],
        serde_json::json!({
            "id": "item_0",
            "type": "mcp_tool_call",
            "server": "everything",
            "tool": "echo",
            "arguments": {"message": "hello items"},
            "result": null,
            "error": null,
            "status": "in_progress"
        })
    );
    let completed = items[1];
    assert_eq!(completed["type"], "item.completed");
    assert_eq!(completed["item"]["id"], "item_0");
    assert_eq!(completed["item"]["status"], "completed");
    assert!(completed["item"]["error"].is_null());
    let result = &completed["item"]["result"];
    assert_eq!(result["content"][0]["type"], "text");
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("hello items"));
    assert!(result
        .as_object()
        .unwrap()
        .contains_key("structured_content"));
    // Field order as Codex writes it.
    let keys: Vec<&String> = completed["item"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "type",
            "server",
            "tool",
            "arguments",
            "result",
            "error",
            "status"
        ]
    );
}

fn wait_for(log: &std::path::Path, word: &str, within: Duration) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains(word) {
            return text;
        }
        assert!(
            start.elapsed() < within,
            "no `{word}` in {} after {within:?}: {text:?}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_interrupted_turn_tells_the_server_its_call_is_cancelled() {
    let harness = Harness::new(vec![
        MockResponse::tool_calls(vec![("c1", "mcp__hostile__slow", "{}")]),
        MockResponse::text("never"),
    ]);
    let log = harness.workdir.path().join("slow.log");
    let config_path = harness.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&config_path).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.hostile]\ncommand = \"python3\"\nargs = [{}, \"--slow\", {}]\n",
        lit(&hostile_server()),
        lit(&log.display().to_string())
    ));
    std::fs::write(&config_path, config).unwrap();
    let child = harness
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
            "slow",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = wait_for(&log, "started", Duration::from_secs(60));
    let id = started
        .lines()
        .find_map(|l| l.strip_prefix("started "))
        .unwrap()
        .to_string();
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let text = wait_for(&log, "cancelled", Duration::from_secs(10));
    assert!(
        text.contains(&format!("cancelled {id}: ")),
        "the cancellation names the call's request id: {text:?}"
    );
}
