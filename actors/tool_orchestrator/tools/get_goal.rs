//! `get_goal`: the thread's goal, its budget and what it used (Codex 0.169's spec).

use super::goal_report::ask;
use crate::tool_orchestrator::contract::parse_args as parse;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use troupe_messages::goals::GoalRequest;
use troupe_messages::tools::ToolSpec;

/// Handler of `get_goal`.
pub struct GetGoalHandler;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GetGoalArgs {}

impl ToolHandler for GetGoalHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "get_goal".into(),
            description: "Get the current goal for this thread, including status, budgets, \
                          token and elapsed-time usage, and remaining token budget."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {},
                "required": [],
                "additionalProperties": false
            }),
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            if let Err(message) = parse::<GetGoalArgs>("get_goal", &ctx.call.payload) {
                return ToolOutcome::error(message);
            }
            ask(&ctx, GoalRequest::Get).await
        })
    }
}
