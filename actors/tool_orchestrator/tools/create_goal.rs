//! `create_goal {objective, token_budget?}`: start the thread's goal (Codex 0.169's spec).
//! The session refuses an empty objective, a budget that is not positive, and a new goal
//! while an unfinished one exists.

use super::goal_report::ask;
use crate::tool_orchestrator::contract::parse_args as parse;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use troupe_messages::goals::GoalRequest;
use troupe_messages::tools::ToolSpec;

/// Handler of `create_goal`.
pub struct CreateGoalHandler;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateGoalArgs {
    objective: String,
    #[serde(default)]
    token_budget: Option<i64>,
}

impl ToolHandler for CreateGoalHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "create_goal".into(),
            description: "Create a goal only when explicitly requested by the user or \
                          system/developer instructions; do not infer goals from ordinary \
                          tasks.\nSet token_budget only when an explicit token budget is \
                          requested. Fails if an unfinished goal exists; use update_goal only \
                          for status."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "objective": {
                        "type": "string",
                        "description": "Required. The concrete objective to start pursuing. This starts a new active goal when no goal exists or replaces the current goal when it is complete."
                    },
                    "token_budget": {
                        "type": "integer",
                        "description": "Positive token budget for the new goal. Omit unless explicitly requested."
                    }
                },
                "required": ["objective"],
                "additionalProperties": false
            }),
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            let args: CreateGoalArgs = match parse("create_goal", &ctx.call.payload) {
                Ok(args) => args,
                Err(message) => return ToolOutcome::error(message),
            };
            let request = GoalRequest::Create {
                objective: args.objective,
                token_budget: args.token_budget,
            };
            ask(&ctx, request).await
        })
    }
}
