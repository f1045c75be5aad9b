//! The params Troupe reads from ACP requests, and the fixed parts of its answers.

use crate::rpc::RpcError;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use troupe_messages::ops::UserInput;

/// The one protocol version this agent speaks (ACP's current major version).
pub const PROTOCOL_VERSION: u64 = 1;

/// Reads `params` as `T`; a mismatch is `-32602` naming the method and what was wrong.
pub fn params<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|err| RpcError::invalid_params(format!("Invalid params for {method}: {err}")))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: u64,
    #[serde(default)]
    pub client_capabilities: ClientCapabilities,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    #[serde(default)]
    pub fs: FsCapabilities,
    /// ACP's `terminal/*` methods (the client executes commands): never used by Troupe,
    /// whose commands run in its own sandbox (docs/acp.md).
    #[serde(default)]
    pub terminal: bool,
    /// `_meta.terminal_output: true`: the client shows a command the agent runs in a
    /// display-only terminal (Zed's extension, as `codex-acp` uses it).
    #[serde(default, rename = "_meta", deserialize_with = "terminal_output_meta")]
    pub terminal_output: bool,
}

/// Whether a client's capabilities `_meta` opts into display-only terminals; any other
/// `_meta` content is the client's own business (ACP: no assumptions about its values).
fn terminal_output_meta<'de, D: serde::Deserializer<'de>>(meta: D) -> Result<bool, D::Error> {
    let meta = Value::deserialize(meta)?;
    Ok(meta
        .get("terminal_output")
        .and_then(Value::as_bool)
        .unwrap_or(false))
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FsCapabilities {
    #[serde(default)]
    pub read_text_file: bool,
    #[serde(default)]
    pub write_text_file: bool,
}

/// The `initialize` result: Troupe's capabilities.
pub fn initialize_result(asked: u64) -> Value {
    json!({
        // A newer client gets the version this agent speaks; it may then disconnect.
        "protocolVersion": asked.min(PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": true,
            "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": false},
        },
        "agentInfo": {"name": "troupe", "title": "Troupe", "version": env!("CARGO_PKG_VERSION")},
        // The model provider's key is Troupe's own configuration (`troupe login`).
        "authMethods": [],
    })
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionParams {
    pub cwd: PathBuf,
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSessionParams {
    pub session_id: String,
    pub cwd: PathBuf,
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    pub session_id: String,
    pub prompt: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    pub session_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetModeParams {
    pub session_id: String,
    pub mode_id: String,
}

/// An MCP server the client wants the session to use: stdio (no `type`, or `"stdio"`) or
/// `"http"`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServer {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(default)]
    pub command: Option<PathBuf>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: Vec<NameValue>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: Vec<NameValue>,
}

#[derive(Debug, Deserialize)]
pub struct NameValue {
    pub name: String,
    pub value: String,
}

/// The client's servers as `-c mcp_servers.<id>={…}` overrides for the thread's config.
/// Ids keep letters, digits, `_` and `-` of the name (others become `_`).
pub fn mcp_overrides(servers: &[McpServer]) -> Result<Vec<String>, RpcError> {
    servers.iter().map(mcp_override).collect()
}

fn mcp_override(server: &McpServer) -> Result<String, RpcError> {
    let id: String = server
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() {
        return Err(RpcError::invalid_params(
            "mcpServers: a server has an empty name",
        ));
    }
    let pairs = |list: &[NameValue]| {
        let inner: Vec<String> = list
            .iter()
            .map(|pair| format!("{}={}", toml_string(&pair.name), toml_string(&pair.value)))
            .collect();
        format!("{{{}}}", inner.join(","))
    };
    let table = match (server.kind.as_deref(), &server.command, &server.url) {
        (None | Some("stdio"), Some(command), _) => {
            let args: Vec<String> = server.args.iter().map(|a| toml_string(a)).collect();
            format!(
                "{{command={},args=[{}],env={}}}",
                toml_string(&command.to_string_lossy()),
                args.join(","),
                pairs(&server.env)
            )
        }
        (Some("http"), _, Some(url)) => format!(
            "{{url={},http_headers={}}}",
            toml_string(url),
            pairs(&server.headers)
        ),
        (Some("sse"), _, _) => {
            return Err(RpcError::invalid_params(format!(
                "mcpServers: `{}` is an SSE server; Troupe speaks stdio and streamable HTTP",
                server.name
            )))
        }
        _ => {
            return Err(RpcError::invalid_params(format!(
                "mcpServers: `{}` needs `command` (stdio) or `type: \"http\"` with `url`",
                server.name
            )))
        }
    };
    Ok(format!("mcp_servers.{id}={table}"))
}

/// A TOML basic string (JSON's escapes are TOML's).
fn toml_string(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// A prompt's content blocks as Troupe input: text, resource links (named for the model),
/// embedded text resources (their text, under their URI) and images.
pub fn prompt_input(blocks: &[Value]) -> Result<Vec<UserInput>, RpcError> {
    let mut input = Vec::new();
    for block in blocks {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = |key: &str| block.get(key).and_then(Value::as_str);
        match kind {
            "text" => input.push(UserInput::Text {
                text: text("text").unwrap_or_default().to_string(),
            }),
            "resource_link" => input.push(UserInput::Text {
                text: format!("@{}", text("uri").unwrap_or_default()),
            }),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or_default();
                let uri = resource
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let Some(body) = resource.get("text").and_then(Value::as_str) else {
                    return Err(RpcError::invalid_params(format!(
                        "prompt: the resource {uri} has no text (binary resources are not supported)"
                    )));
                };
                input.push(UserInput::Text {
                    text: format!("<context ref=\"{uri}\">\n{body}\n</context>"),
                });
            }
            "image" => {
                let (Some(mime), Some(data)) = (text("mimeType"), text("data")) else {
                    return Err(RpcError::invalid_params(
                        "prompt: an image needs mimeType and data",
                    ));
                };
                input.push(UserInput::Image {
                    image_url: format!("data:{mime};base64,{data}"),
                });
            }
            other => {
                return Err(RpcError::invalid_params(format!(
                    "prompt: content of type `{other}` is not supported"
                )))
            }
        }
    }
    if input.is_empty() {
        return Err(RpcError::invalid_params("prompt: empty"));
    }
    Ok(input)
}
