//! `update_plan`: the model's step list. Nothing runs; the plan is shown to the user as an
//! event, and the model is told it was recorded.

use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use troupe_messages::events::EventMsg;
use troupe_messages::tools::{PlanItem, StepStatus, ToolPayload, ToolSpec};

/// Handler of `update_plan`.
pub struct PlanHandler;

/// Arguments as the model writes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    #[serde(default)]
    pub explanation: Option<String>,
    pub plan: Vec<PlanItem>,
}

impl ToolHandler for PlanHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "update_plan".into(),
            description: "Updates the task plan. Give an optional explanation and the whole \
                          list of steps, each with a status. At most one step may be \
                          in_progress at a time."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "explanation": {"type": "string"},
                    "plan": {
                        "type": "array",
                        "description": "The steps in order.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "step": {"type": "string"},
                                "status": {"type": "string",
                                    "enum": ["pending", "in_progress", "completed"]}
                            },
                            "required": ["step", "status"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["plan"],
                "additionalProperties": false
            }),
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            let args = match parse_plan_args(&ctx.call.payload) {
                Ok(args) => args,
                Err(message) => return ToolOutcome::error(message),
            };
            ctx.services.tell(EventMsg::PlanUpdated {
                explanation: args.explanation,
                plan: args.plan,
            });
            ToolOutcome {
                content: "Plan updated".into(),
                success: true,
                parts: Vec::new(),
            }
        })
    }
}

/// Validates the arguments; the error says what is wrong.
pub fn parse_plan_args(payload: &ToolPayload) -> Result<PlanArgs, String> {
    let ToolPayload::Function { arguments } = payload else {
        return Err("update_plan expects JSON function arguments".into());
    };
    let args: PlanArgs = serde_json::from_str(arguments)
        .map_err(|err| format!("invalid arguments for update_plan: {err}"))?;
    let running = args
        .plan
        .iter()
        .filter(|item| item.status == StepStatus::InProgress)
        .count();
    if running > 1 {
        return Err(format!(
            "invalid plan: {running} steps are in_progress; at most one may be"
        ));
    }
    Ok(args)
}

#[cfg(test)]
#[path = "update_plan_tests.rs"]
mod tests;
