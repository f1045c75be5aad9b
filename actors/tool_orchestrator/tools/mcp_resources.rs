//! `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`: the
//! resources of the configured MCP servers, offered (with Codex's specs) whenever the session
//! has an enabled MCP server. Each call is shown to frontends as an MCP tool call (server
//! `troupe` when no server is named, as Codex names its own), and answers with Codex's JSON.

use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use std::sync::Arc;
use troupe_mcp::resources::ResourceRequest;
use troupe_mcp::{output, McpManager};
use troupe_messages::events::EventMsg;
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::{ToolPayload, ToolSpec};

/// The server shown for a call that names none.
const OWN_SERVER: &str = "troupe";

/// Which of the three tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceTool {
    List,
    Templates,
    Read,
}

impl ResourceTool {
    pub const ALL: [ResourceTool; 3] = [
        ResourceTool::List,
        ResourceTool::Templates,
        ResourceTool::Read,
    ];

    fn name(self) -> &'static str {
        match self {
            ResourceTool::List => "list_mcp_resources",
            ResourceTool::Templates => "list_mcp_resource_templates",
            ResourceTool::Read => "read_mcp_resource",
        }
    }
}

pub struct McpResourceHandler {
    pub tool: ResourceTool,
    pub manager: Arc<McpManager>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    server: Option<String>,
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    server: String,
    uri: String,
}

impl ToolHandler for McpResourceHandler {
    fn spec(&self) -> ToolSpec {
        let (description, parameters) = match self.tool {
            ResourceTool::List => (
                "Lists resources provided by MCP servers. Resources allow servers to share data \
                 that provides context to language models, such as files, database schemas, or \
                 application-specific information. Prefer resources over web search when possible.",
                list_parameters("list_mcp_resources", "resources"),
            ),
            ResourceTool::Templates => (
                "Lists resource templates provided by MCP servers. Parameterized resource \
                 templates allow servers to share data that takes parameters and provides \
                 context to language models, such as files, database schemas, or \
                 application-specific information. Prefer resource templates over web search \
                 when possible.",
                list_parameters("list_mcp_resource_templates", "resource templates"),
            ),
            ResourceTool::Read => (
                "Read a specific resource from an MCP server given the server name and resource \
                 URI.",
                serde_json::json!({
                    "type": "object",
                    "properties": {
                        "server": {
                            "type": "string",
                            "description": "MCP server name exactly as configured. Must match \
                                            the 'server' field returned by list_mcp_resources."
                        },
                        "uri": {
                            "type": "string",
                            "description": "Resource URI to read. Must be one of the URIs \
                                            returned by list_mcp_resources."
                        }
                    },
                    "required": ["server", "uri"],
                    "additionalProperties": false
                }),
            ),
        };
        ToolSpec::Function {
            name: self.tool.name().into(),
            description: description.into(),
            strict: false,
            parameters,
        }
    }

    /// Offered only when the session has an MCP server to ask.
    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        settings
            .mcp_servers
            .values()
            .any(|s| s.enabled)
            .then(|| self.spec())
    }

    /// Reading and listing change nothing.
    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        let manager = self.manager.clone();
        let tool = self.tool;
        Box::pin(async move { call(&manager, tool, &ctx).await })
    }
}

fn list_parameters(tool: &str, what: &str) -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "cursor": {
                "type": "string",
                "description": format!(
                    "Opaque cursor from a previous {tool} call; omit for the first page."
                )
            },
            "server": {
                "type": "string",
                "description": format!(
                    "MCP server name. Omit to list {what} from every configured server."
                )
            }
        },
        "additionalProperties": false
    })
}

/// The request a call's arguments mean.
fn parse(
    tool: ResourceTool,
    payload: &ToolPayload,
) -> Result<(ResourceRequest, serde_json::Value), String> {
    let ToolPayload::Function { arguments } = payload else {
        return Err(format!("{} takes JSON function arguments", tool.name()));
    };
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments.as_str()
    };
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|err| format!("invalid JSON arguments for {}: {err}", tool.name()))?;
    let bad = |err: serde_json::Error| format!("invalid arguments for {}: {err}", tool.name());
    let request = match tool {
        ResourceTool::List | ResourceTool::Templates => {
            let args: ListArgs = serde_json::from_value(value.clone()).map_err(bad)?;
            if tool == ResourceTool::List {
                ResourceRequest::List {
                    server: args.server,
                    cursor: args.cursor,
                }
            } else {
                ResourceRequest::Templates {
                    server: args.server,
                    cursor: args.cursor,
                }
            }
        }
        ResourceTool::Read => {
            let args: ReadArgs = serde_json::from_value(value.clone()).map_err(bad)?;
            ResourceRequest::Read {
                server: args.server,
                uri: args.uri,
            }
        }
    };
    Ok((request, value))
}

async fn call(manager: &McpManager, tool: ResourceTool, ctx: &ToolContext) -> ToolOutcome {
    let (request, arguments) = match parse(tool, &ctx.call.payload) {
        Ok(parsed) => parsed,
        Err(message) => return ToolOutcome::error(message),
    };
    let server = match &request {
        ResourceRequest::List { server, .. } | ResourceRequest::Templates { server, .. } => {
            server.clone()
        }
        ResourceRequest::Read { server, .. } => Some(server.clone()),
    }
    .unwrap_or_else(|| OWN_SERVER.to_string());
    let name = tool.name().to_string();
    ctx.services.tell(EventMsg::McpToolCallBegin {
        call_id: ctx.call.call_id.clone(),
        tool_name: name.clone(),
        server: server.clone(),
        tool: name.clone(),
        arguments: arguments.clone(),
    });
    let max_bytes = ctx.settings.tool_output_max_bytes;
    let (outcome, result, error) = match manager.resources(&ctx.settings.mcp_servers, request).await
    {
        Ok(payload) => {
            let text = payload.to_string();
            let shown = output::truncate_middle(&text, max_bytes);
            let result = serde_json::json!({
                "content": [{"type": "text", "text": shown}],
            });
            (ToolOutcome::ok(shown), Some(result), None)
        }
        Err(err) => (
            ToolOutcome::error(err.to_string()),
            None,
            Some(err.to_string()),
        ),
    };
    ctx.services.tell(EventMsg::McpToolCallEnd {
        call_id: ctx.call.call_id.clone(),
        tool_name: name.clone(),
        server,
        tool: name,
        arguments,
        result,
        error,
        success: outcome.success,
        output: outcome.content.clone(),
    });
    outcome
}
