//! Shared set-up of the hook scenarios: a harness whose user config adds hooks, hook
//! scripts written into the home, and readers for what the model and the hooks saw.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use troupe_mock_model::{events, MockResponse};
use troupe_test_support::{json_lines, stderr, Harness};

/// Appends `hooks_toml` to the harness's user `config.toml`.
pub fn add_hooks(h: &Harness, hooks_toml: &str) {
    let config = h.home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push('\n');
    text.push_str(hooks_toml);
    std::fs::write(config, text).unwrap();
}

/// Writes `body` as a shell script in the home and returns the `command` that runs it.
pub fn script(h: &Harness, name: &str, body: &str) -> String {
    let path = h.home.path().join(name);
    std::fs::write(&path, body).unwrap();
    format!("sh {}", path.display())
}

/// `[[hooks.EVENT]]` with one command hook.
pub fn hook(event: &str, matcher: Option<&str>, command: &str, timeout: u64) -> String {
    let matcher = matcher
        .map(|m| format!("matcher = {}\n", toml_string(m)))
        .unwrap_or_default();
    format!(
        "[[hooks.{event}]]\n{matcher}[[hooks.{event}.hooks]]\ntype = \"command\"\n\
         command = {}\ntimeout = {timeout}\n",
        toml_string(command)
    )
}

fn toml_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Where a script saves its stdin: `cat > FILE` prefix.
pub fn capture(h: &Harness, name: &str) -> (PathBuf, String) {
    let path = h.home.path().join(name);
    let prefix = format!("cat >> {}; echo >> {}\n", path.display(), path.display());
    (path, prefix)
}

/// The payloads a capturing script saved, one JSON object per line.
pub fn captured(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn custom_call(call_id: &str, name: &str, input: &str) -> MockResponse {
    MockResponse::sse(vec![
        events::created("resp_custom"),
        events::custom_tool_call_done(call_id, name, input),
        events::completed("resp_custom", 10, 0, 5, 0),
    ])
}

/// `exec --json ARGS` (danger-full-access), asserting success.
pub fn exec_json(h: &Harness, args: &[&str]) -> (Vec<Value>, String) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = h.exec(&all);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    (json_lines(&out), stderr(&out))
}

/// Every tool output (function or custom) in a request body.
pub fn outputs(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output")
        .map(|i| i["output"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The texts of every message of `role` in a request body.
pub fn messages(body: &Value, role: &str) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "message" && i["role"] == role)
        .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["text"].as_str().map(str::to_string))
        .collect()
}

/// The completed `hook_run` items: (event_name, decision).
pub fn hook_runs(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "item.completed" && l["item"]["type"] == "hook_run")
        .map(|l| {
            (
                l["item"]["event_name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                l["item"]["decision"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}
