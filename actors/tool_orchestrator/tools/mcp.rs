//! Calls to MCP tools (`mcp__<server>__<tool>`). The tools of a turn are listed when the
//! turn starts (`TurnServices::mcp_tools`); one handler serves them all: approval per the
//! server's `default_tools_approval_mode` / per-tool `approval_mode`, then the call through
//! the runtime's `McpManager` within `tool_timeout_sec`, its result bounded for the model.

use crate::approvals::cache::ApprovalKey;
use crate::tool_orchestrator::approval_gate;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use std::sync::Arc;
use troupe_mcp::{approval, output, McpManager};
use troupe_messages::events::EventMsg;
use troupe_messages::policy::AskForApproval;
use troupe_messages::tools::{ToolPayload, ToolSpec};

/// Serves every MCP tool; routed by name prefix, never advertised itself.
pub struct McpHandler {
    pub manager: Arc<McpManager>,
}

/// Bytes of the arguments shown in an approval request.
const MAX_ARGUMENTS_SHOWN: usize = 2048;

impl ToolHandler for McpHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: troupe_mcp::names::PREFIX.into(),
            description: "Route of MCP tools; each is advertised under its own name.".into(),
            strict: false,
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        }
    }

    fn spec_for(&self, _settings: &troupe_messages::settings::SessionSettings) -> Option<ToolSpec> {
        None
    }

    /// A server's tools may write anything: calls run one after another, in call order.
    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        let manager = self.manager.clone();
        Box::pin(async move { call(&manager, &ctx).await })
    }
}

async fn call(manager: &McpManager, ctx: &ToolContext) -> ToolOutcome {
    let name = ctx.call.tool_name.clone();
    let Some(tool) = ctx.services.mcp_tools().get(&name).cloned() else {
        return ToolOutcome::error(format!("unknown MCP tool `{name}`"));
    };
    let arguments = match parse_arguments(&ctx.call.payload) {
        Ok(arguments) => arguments,
        Err(message) => return ToolOutcome::error(message),
    };
    let mode = tool.settings.approval_mode_for(&tool.tool.name);
    let settings = &ctx.settings;
    if approval::needs_approval(
        mode,
        tool.tool.annotations.as_ref(),
        settings.approval_policy,
        settings.sandbox_mode,
    ) {
        if settings.approval_policy == AskForApproval::Never {
            return ToolOutcome::error(format!(
                "MCP tool call declined: `{}` of server `{}` needs approval \
                 (approval mode `{mode:?}`), and approval_policy is `never`",
                tool.tool.name, tool.server
            ));
        }
        let shown = arguments
            .as_ref()
            .map(|a| serde_json::Value::Object(a.clone()).to_string())
            .unwrap_or_else(|| "{}".into());
        let request = EventMsg::ExecApprovalRequest {
            call_id: ctx.call.call_id.clone(),
            command: vec![
                name.clone(),
                output::truncate_middle(&shown, MAX_ARGUMENTS_SHOWN),
            ],
            cwd: settings.cwd.clone(),
            reason: Some(format!(
                "MCP tool `{}` of server `{}`",
                tool.tool.name.escape_debug(),
                tool.server.escape_debug()
            )),
            sandbox_retry: None,
        };
        let key = ApprovalKey::McpTool {
            server: tool.server.clone(),
            tool: tool.tool.name.to_string(),
        };
        if let Err(outcome) = approval_gate::approve(ctx, request, &[key]).await {
            return outcome;
        }
    }
    let shown_arguments = arguments
        .clone()
        .map_or(serde_json::Value::Null, serde_json::Value::Object);
    ctx.services.tell(EventMsg::McpToolCallBegin {
        call_id: ctx.call.call_id.clone(),
        tool_name: name.clone(),
        server: tool.server.clone(),
        tool: tool.tool.name.to_string(),
        arguments: shown_arguments.clone(),
    });
    let (outcome, result, error) = match manager.call(&tool, arguments).await {
        Ok(result) => {
            let (content, success) = output::render(&result, settings.tool_output_max_bytes);
            // What frontends see is bounded like what the model sees.
            let shown = output::bounded_result(&result, settings.tool_output_max_bytes);
            (
                ToolOutcome {
                    content,
                    success,
                    parts: Vec::new(),
                },
                Some(shown),
                None,
            )
        }
        Err(err) => (
            ToolOutcome::error(err.to_string()),
            None,
            Some(err.to_string()),
        ),
    };
    ctx.services.tell(EventMsg::McpToolCallEnd {
        call_id: ctx.call.call_id.clone(),
        tool_name: name,
        server: tool.server.clone(),
        tool: tool.tool.name.to_string(),
        arguments: shown_arguments,
        result,
        error,
        success: outcome.success,
        output: outcome.content.clone(),
    });
    outcome
}

/// The call's arguments: a JSON object, or nothing.
fn parse_arguments(
    payload: &ToolPayload,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, String> {
    let ToolPayload::Function { arguments } = payload else {
        return Err("MCP tools take JSON function arguments".into());
    };
    if arguments.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => Ok(Some(map)),
        Ok(serde_json::Value::Null) => Ok(None),
        Ok(_) => Err("MCP tool arguments must be a JSON object".into()),
        Err(err) => Err(format!("invalid JSON arguments: {err}")),
    }
}
