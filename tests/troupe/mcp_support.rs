//! Where the MCP test servers are: the npm packages of `tests/mcp_servers` (installed by
//! `npm ci` there, as `.ci/run` does) and the hostile server beside them.
#![allow(dead_code)]

use std::path::PathBuf;

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp_servers")
}

/// The launcher of an npm MCP server (`mcp-server-everything`, `mcp-server-filesystem`).
pub fn npm_server(bin: &str) -> String {
    let path = servers_dir().join("node_modules/.bin").join(bin);
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` in tests/mcp_servers",
        path.display()
    );
    path.display().to_string()
}

pub fn hostile_server() -> String {
    servers_dir().join("hostile.py").display().to_string()
}

/// TOML string literal.
pub fn lit(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Names of the function tools offered in a recorded request body.
pub fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().map(str::to_string))
        .collect()
}
