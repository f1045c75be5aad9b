//! MCP resources and resource templates, for the model's `list_mcp_resources`,
//! `list_mcp_resource_templates` and `read_mcp_resource` tools. The payloads are Codex's:
//! `{"resources": [{"server", …resource}]}` over every server that offers resources,
//! `{"server", "resources", "nextCursor"?}` for one server (one page, from `cursor`),
//! `{"resourceTemplates": …}` likewise, and `{"server", "uri", "contents"}` for a read.

use crate::connection::Connection;
use crate::{McpError, McpManager};
use futures::future::join_all;
use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use troupe_messages::mcp::McpServerSettings;

/// Pages read from one server when listing without a cursor (a hostile server could
/// paginate forever).
const MAX_PAGES: usize = 20;

/// What the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceRequest {
    List {
        server: Option<String>,
        cursor: Option<String>,
    },
    Templates {
        server: Option<String>,
        cursor: Option<String>,
    },
    Read {
        server: String,
        uri: String,
    },
}

/// Resources or templates: which list, and the field of each page holding it.
#[derive(Clone, Copy)]
enum Listing {
    Resources,
    Templates,
}

impl Listing {
    fn field(self) -> &'static str {
        match self {
            Listing::Resources => "resources",
            Listing::Templates => "resourceTemplates",
        }
    }
}

impl McpManager {
    /// Serves one resource request over the turn's configured `servers`.
    pub async fn resources(
        &self,
        servers: &BTreeMap<String, McpServerSettings>,
        request: ResourceRequest,
    ) -> Result<Value, McpError> {
        match request {
            ResourceRequest::List { server, cursor } => {
                self.listing(servers, Listing::Resources, server, cursor)
                    .await
            }
            ResourceRequest::Templates { server, cursor } => {
                self.listing(servers, Listing::Templates, server, cursor)
                    .await
            }
            ResourceRequest::Read { server, uri } => {
                let (connection, settings) = self.named(servers, &server).await?;
                let read = connection
                    .service
                    .peer()
                    .read_resource(ReadResourceRequestParams {
                        meta: None,
                        uri: uri.clone(),
                    });
                let result = within(&server, settings, read).await?;
                let mut payload = Map::new();
                payload.insert("server".into(), json!(server));
                payload.insert("uri".into(), json!(uri));
                payload.insert("contents".into(), json!(result.contents));
                Ok(Value::Object(payload))
            }
        }
    }

    async fn named<'a>(
        &self,
        servers: &'a BTreeMap<String, McpServerSettings>,
        id: &str,
    ) -> Result<(Arc<Connection>, &'a McpServerSettings), McpError> {
        let settings = servers
            .get(id)
            .filter(|s| s.enabled)
            .ok_or_else(|| McpError::Config {
                server: id.to_string(),
                reason: format!(
                    "no enabled MCP server `{}`; configured: {}",
                    id.escape_debug(),
                    servers
                        .iter()
                        .filter(|(_, s)| s.enabled)
                        .map(|(id, _)| format!("`{id}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
        Ok((self.connection(id, settings).await?, settings))
    }

    async fn listing(
        &self,
        servers: &BTreeMap<String, McpServerSettings>,
        listing: Listing,
        server: Option<String>,
        cursor: Option<String>,
    ) -> Result<Value, McpError> {
        let field = listing.field();
        let Some(server) = server else {
            if cursor.is_some() {
                return Err(McpError::Config {
                    server: String::new(),
                    reason: "a cursor can only be used together with `server`".into(),
                });
            }
            // Every enabled server that says it has resources; one that fails is left out.
            let enabled: Vec<(&String, &McpServerSettings)> =
                servers.iter().filter(|(_, s)| s.enabled).collect();
            let pages = join_all(enabled.iter().map(|(id, settings)| async move {
                let connection = self.connection(id, settings).await.ok()?;
                if !connection.offers_resources() {
                    return None;
                }
                all_pages(&connection, id, settings, listing).await.ok()
            }))
            .await;
            let mut items = Vec::new();
            for ((id, _), page) in enabled.into_iter().zip(pages) {
                items.extend(page.into_iter().flatten().map(|item| with_server(id, item)));
            }
            let mut payload = Map::new();
            payload.insert(field.into(), Value::Array(items));
            return Ok(Value::Object(payload));
        };
        let (connection, settings) = self.named(servers, &server).await?;
        let (items, next) = match cursor {
            Some(cursor) => page(&connection, &server, settings, listing, Some(cursor)).await?,
            None => (
                all_pages(&connection, &server, settings, listing).await?,
                None,
            ),
        };
        let items: Vec<Value> = items.into_iter().map(|i| with_server(&server, i)).collect();
        let mut payload = Map::new();
        payload.insert("server".into(), json!(server));
        payload.insert(field.into(), Value::Array(items));
        if let Some(next) = next {
            payload.insert("nextCursor".into(), json!(next));
        }
        Ok(Value::Object(payload))
    }
}

/// `{"server": id, …item}`.
fn with_server(id: &str, item: Value) -> Value {
    let mut object = Map::new();
    object.insert("server".into(), json!(id));
    if let Value::Object(fields) = item {
        object.extend(fields);
    }
    Value::Object(object)
}

/// Runs a request within the server's `tool_timeout_sec`.
async fn within<T>(
    server: &str,
    settings: &McpServerSettings,
    request: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
) -> Result<T, McpError> {
    let deadline = Duration::from_millis(settings.tool_timeout_ms);
    match tokio::time::timeout(deadline, request).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(McpError::Call {
            server: server.to_string(),
            reason: err.to_string(),
        }),
        Err(_) => Err(McpError::CallTimeout {
            server: server.to_string(),
            seconds: deadline.as_secs_f64(),
        }),
    }
}

/// One page: its items (as JSON) and the next cursor.
async fn page(
    connection: &Connection,
    server: &str,
    settings: &McpServerSettings,
    listing: Listing,
    cursor: Option<String>,
) -> Result<(Vec<Value>, Option<String>), McpError> {
    let peer = connection.service.peer();
    let params = Some(PaginatedRequestParams { meta: None, cursor });
    let (items, next) = match listing {
        Listing::Resources => {
            let result = within(server, settings, peer.list_resources(params)).await?;
            (json!(result.resources), result.next_cursor)
        }
        Listing::Templates => {
            let result = within(server, settings, peer.list_resource_templates(params)).await?;
            (json!(result.resource_templates), result.next_cursor)
        }
    };
    let items = match items {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    Ok((items, next))
}

/// Every page, up to `MAX_PAGES`.
async fn all_pages(
    connection: &Connection,
    server: &str,
    settings: &McpServerSettings,
    listing: Listing,
) -> Result<Vec<Value>, McpError> {
    let mut items = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let (mut more, next) = page(connection, server, settings, listing, cursor).await?;
        items.append(&mut more);
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(items)
}
