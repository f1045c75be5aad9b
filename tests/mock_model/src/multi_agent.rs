//! Stateless multi-agent scenario for benchmarks (`mock-model --agents N`): a root that
//! spawns N sub-agents in one response and waits for all of them, and children that each
//! run the configured command once and answer.
//!
//! Every request is answered from its own body, for Troupe and for Codex CLI 0.169
//! (`[features] multi_agent_v2`) alike:
//! - a child is recognised by its task: Codex sends it as an `agent_message` item whose
//!   `recipient` is the child's task path (`/root/a3`); Troupe as a user message starting
//!   holding ``[You are agent `/root/a3` ``;
//! - a child answers `agent-done a3.`; the root counts the distinct answers anywhere in its
//!   input (Troupe's `<subagent_notification>` items and `wait_agent` outputs, Codex's
//!   `FINAL_ANSWER` agent messages) and calls `wait_agent` until it has seen all N;
//! - Codex offers the collaboration tools in a `namespace` tool named `collaboration`, and
//!   only accepts calls to them that name that namespace: the calls carry it when the
//!   request's tools have it.

use serde_json::{json, Value};

use crate::auto::{call_for, count_tool_outputs, pick_flavor, AutoConfig};
use crate::events;
use crate::response::MockResponse;

/// Name of the `k`-th child (1-based): `a1`, `a2`…
pub fn child_name(k: usize) -> String {
    format!("a{k}")
}

/// A child's final answer; the trailing dot keeps `a1` from matching `a10`.
pub fn child_answer(name: &str) -> String {
    format!("agent-done {name}.")
}

/// The answer to one request of the multi-agent scenario with `agents` children.
pub fn respond(config: &AutoConfig, agents: usize, body: &Value) -> MockResponse {
    match child_task_path(body) {
        Some(path) => child(config, body, &path),
        None => root(config, agents, body),
    }
}

fn root(config: &AutoConfig, agents: usize, body: &Value) -> MockResponse {
    let namespace = collaboration_namespace(body);
    if count_tool_outputs(body) == 0 {
        let calls = (1..=agents)
            .map(|k| {
                let name = child_name(k);
                let args = json!({
                    "task_name": name,
                    "message": format!("Run `{}` once, then answer.", config.command),
                    "fork_turns": "none",
                });
                (format!("spawn_{k}"), "spawn_agent", args.to_string())
            })
            .collect();
        return calls_response(calls, namespace);
    }
    if answers_seen(body, agents) >= agents {
        return MockResponse::text(&config.answer);
    }
    let waits = count_tool_outputs(body);
    let args = json!({"timeout_ms": 30000}).to_string();
    calls_response(
        vec![(format!("wait_{waits}"), "wait_agent", args)],
        namespace,
    )
}

fn child(config: &AutoConfig, body: &Value, path: &str) -> MockResponse {
    let name = path.rsplit('/').next().unwrap_or(path);
    if count_tool_outputs(body) == 0 {
        let (tool, args) = call_for(pick_flavor(body), &config.command);
        return MockResponse::tool_calls(vec![(format!("cmd_{name}"), tool, args)]);
    }
    MockResponse::text(&child_answer(name))
}

/// How many of the `agents` children's answers appear in the request's input.
pub fn answers_seen(body: &Value, agents: usize) -> usize {
    let input = body.get("input").map(Value::to_string).unwrap_or_default();
    (1..=agents)
        .filter(|k| input.contains(&child_answer(&child_name(*k))))
        .count()
}

/// The task path of the child making this request, if a child makes it.
pub fn child_task_path(body: &Value) -> Option<String> {
    let input = body.get("input").and_then(Value::as_array)?;
    for item in input {
        let kind = item.get("type").and_then(Value::as_str);
        if kind == Some("agent_message") {
            let recipient = item.get("recipient").and_then(Value::as_str)?;
            if recipient.starts_with("/root/") {
                return Some(recipient.to_string());
            }
        }
        if kind == Some("message") && item.get("role").and_then(Value::as_str) == Some("user") {
            let text = item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<String>();
            if let Some((_, rest)) = text.split_once("[You are agent `") {
                return rest.split('`').next().map(str::to_string);
            }
        }
    }
    None
}

/// `Some("collaboration")` when the request offers the tools in Codex's namespace.
fn collaboration_namespace(body: &Value) -> Option<&'static str> {
    let tools = body.get("tools").and_then(Value::as_array)?;
    tools
        .iter()
        .any(|t| {
            t.get("type").and_then(Value::as_str) == Some("namespace")
                && t.get("name").and_then(Value::as_str) == Some("collaboration")
        })
        .then_some("collaboration")
}

/// Function calls in one response, each naming `namespace` when there is one.
fn calls_response(calls: Vec<(String, &str, String)>, namespace: Option<&str>) -> MockResponse {
    let resp_id = format!("resp_mock_agents_{}", calls.len());
    let mut evs = vec![events::created(&resp_id)];
    for (i, (call_id, name, args)) in calls.iter().enumerate() {
        let mut done = events::function_call_done(call_id, name, args);
        if let (Some(ns), Some(item)) = (namespace, done.get_mut("item")) {
            item["namespace"] = json!(ns);
        }
        evs.push(events::with_output_index(done, i));
    }
    evs.push(events::completed(&resp_id, 100, 0, 20, 0));
    MockResponse::sse(evs)
}

#[cfg(test)]
#[path = "multi_agent_tests.rs"]
mod tests;
