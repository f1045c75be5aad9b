//! The MCP servers of one runtime: one connection per (server id, transport), shared by
//! every thread, started in parallel when a turn first needs them, restarted on the next
//! use after they die. Nothing here blocks a caller beyond the configured deadlines.

use crate::connection::Connection;
use crate::names::{self, RawToolName};
use crate::McpError;
use futures::future::join_all;
use rmcp::model::{CallToolResult, Tool};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use troupe_messages::mcp::{McpServerSettings, McpTransport};
use troupe_messages::tools::ToolSpec;

/// A tool description longer than this is cut (a hostile server must not fill the prompt).
const MAX_DESCRIPTION_BYTES: usize = 2048;
/// An input schema whose JSON is longer than this is replaced by an open object schema.
const MAX_SCHEMA_BYTES: usize = 16 * 1024;

type SlotKey = (String, McpTransport);

/// One server's connection, started at most once at a time (the async lock).
#[derive(Default)]
struct Slot {
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

/// Shared by the threads of a runtime.
#[derive(Default)]
pub struct McpManager {
    slots: Mutex<HashMap<SlotKey, Arc<Slot>>>,
}

/// One tool offered to the model, with what calling it needs.
#[derive(Debug, Clone)]
pub struct McpTool {
    pub model_name: String,
    pub server: String,
    pub tool: Tool,
    pub settings: Arc<McpServerSettings>,
}

impl McpTool {
    /// The function tool the model sees.
    pub fn spec(&self) -> ToolSpec {
        let description = self
            .tool
            .description
            .as_deref()
            .map(|d| crate::output::truncate_middle(d, MAX_DESCRIPTION_BYTES))
            .unwrap_or_default();
        let mut parameters = serde_json::Value::Object(self.tool.input_schema.as_ref().clone());
        let too_big =
            serde_json::to_string(&parameters).map_or(true, |s| s.len() > MAX_SCHEMA_BYTES);
        if too_big || parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
            parameters = serde_json::json!({"type": "object", "additionalProperties": true});
        }
        if let Some(object) = parameters.as_object_mut() {
            object
                .entry("properties")
                .or_insert_with(|| serde_json::json!({}));
        }
        ToolSpec::Function {
            name: self.model_name.clone(),
            description,
            strict: false,
            parameters,
        }
    }
}

/// The MCP tools of one turn, by model-visible name, in advertising order.
#[derive(Debug, Clone, Default)]
pub struct McpToolset {
    tools: Vec<McpTool>,
}

impl McpToolset {
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(McpTool::spec).collect()
    }

    pub fn get(&self, model_name: &str) -> Option<&McpTool> {
        self.tools.iter().find(|tool| tool.model_name == model_name)
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// What preparing a turn's servers gave.
#[derive(Debug, Default)]
pub struct Prepared {
    pub toolset: McpToolset,
    /// One line per server that could not start or advertised unusable tools.
    pub warnings: Vec<String>,
}

impl McpManager {
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&self, id: &str, settings: &McpServerSettings) -> Arc<Slot> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slots
            .entry((id.to_string(), settings.transport.clone()))
            .or_default()
            .clone()
    }

    /// The live connection of a server, started (or restarted, when it died) if needed.
    pub(crate) async fn connection(
        &self,
        id: &str,
        settings: &McpServerSettings,
    ) -> Result<Arc<Connection>, McpError> {
        let slot = self.slot(id, settings);
        let mut current = slot.connection.lock().await;
        if let Some(connection) = current.as_ref() {
            if !connection.is_closed() {
                return Ok(connection.clone());
            }
            tracing::info!(server = id, "MCP server exited; restarting it");
        }
        *current = None;
        let connection = Arc::new(Connection::start(id, settings).await?);
        *current = Some(connection.clone());
        Ok(connection)
    }

    /// Starts (in parallel) every enabled server of `servers` not already running and
    /// names their tools. A server that fails is a warning; the others go on.
    pub async fn prepare(&self, servers: &BTreeMap<String, McpServerSettings>) -> Prepared {
        let enabled: Vec<(&String, &McpServerSettings)> =
            servers.iter().filter(|(_, s)| s.enabled).collect();
        let started = join_all(
            enabled
                .iter()
                .map(|(id, settings)| self.connection(id, settings)),
        )
        .await;
        let mut warnings = Vec::new();
        let mut offered: Vec<(RawToolName, Tool, Arc<McpServerSettings>)> = Vec::new();
        for ((id, settings), result) in enabled.into_iter().zip(started) {
            match result {
                Ok(connection) => {
                    let settings = Arc::new(settings.clone());
                    for tool in &connection.tools {
                        if settings.allows_tool(&tool.name) {
                            let raw = RawToolName {
                                server: id.clone(),
                                tool: tool.name.to_string(),
                            };
                            offered.push((raw, tool.clone(), settings.clone()));
                        }
                    }
                }
                Err(err) => warnings.push(format!(
                    "MCP server `{}` is not available this turn: {err}",
                    id.escape_debug()
                )),
            }
        }
        let (named, duplicates) =
            names::name_tools(offered.iter().map(|(raw, _, _)| raw.clone()).collect());
        for duplicate in duplicates {
            warnings.push(format!(
                "MCP server `{}` lists the tool `{}` more than once; the first is used",
                duplicate.server.escape_debug(),
                crate::output::truncate_middle(&duplicate.tool.escape_debug().to_string(), 120)
            ));
        }
        let mut by_raw: BTreeMap<(String, String), (Tool, Arc<McpServerSettings>)> =
            BTreeMap::new();
        for (raw, tool, settings) in offered {
            by_raw
                .entry((raw.server, raw.tool))
                .or_insert((tool, settings));
        }
        let tools = named
            .into_iter()
            .filter_map(|named| {
                let (tool, settings) =
                    by_raw.get(&(named.raw.server.clone(), named.raw.tool.clone()))?;
                Some(McpTool {
                    model_name: named.model_name,
                    server: named.raw.server,
                    tool: tool.clone(),
                    settings: settings.clone(),
                })
            })
            .collect();
        Prepared {
            toolset: McpToolset { tools },
            warnings,
        }
    }

    /// Calls `tool` within its server's `tool_timeout_sec`; a server that died since its
    /// last use is restarted first.
    pub async fn call(
        &self,
        tool: &McpTool,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<CallToolResult, McpError> {
        let connection = self.connection(&tool.server, &tool.settings).await?;
        let deadline = Duration::from_millis(tool.settings.tool_timeout_ms);
        match tokio::time::timeout(deadline, connection.call(&tool.tool.name, arguments)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(err)) => Err(McpError::Call {
                server: tool.server.clone(),
                reason: err.to_string(),
            }),
            Err(_) => Err(McpError::CallTimeout {
                server: tool.server.clone(),
                seconds: deadline.as_secs_f64(),
            }),
        }
    }
}
