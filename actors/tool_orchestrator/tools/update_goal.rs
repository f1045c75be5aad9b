//! `update_goal {status}`: the model reports the goal `complete`, `blocked` or `paused`
//! (Codex 0.169's spec, its rules in the description). `active` and `budget_limited` are set
//! by the user or the runtime only.

use super::goal_report::ask;
use crate::tool_orchestrator::contract::parse_args as parse;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use troupe_messages::goals::{GoalRequest, GoalStatus};
use troupe_messages::tools::ToolSpec;

/// Handler of `update_goal`.
pub struct UpdateGoalHandler;

/// The statuses the model may set.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ModelStatus {
    Complete,
    Blocked,
    Paused,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateGoalArgs {
    status: ModelStatus,
}

const DESCRIPTION: &str = "Update the existing goal.\nSet status to `paused` only at the user's explicit request to pause this goal, never on your own initiative. Ask if unclear; a later resume revokes that request. Report the returned status and stop goal work. Budget limits take precedence over pausing.\nSet status to `complete` only when the objective has actually been achieved and no required work remains.\nSet status to `blocked` only when the same blocking condition has repeated for at least three consecutive goal turns, counting the original/user-triggered turn and any automatic continuations, and the agent cannot make meaningful progress without user input or an external-state change.\nIf the user resumes a goal that was previously marked `blocked`, treat the resumed run as a fresh blocked audit. If the same blocking condition then repeats for at least three consecutive resumed goal turns, set status to `blocked` again.\nOnce the blocked threshold is satisfied, do not keep reporting that you are still blocked while leaving the goal active; set status to `blocked`.\nDo not use `blocked` merely because the work is hard, slow, uncertain, incomplete, or would benefit from clarification.\nDo not mark a goal complete merely because its budget is nearly exhausted or because you are stopping work.\nYou cannot use this tool to resume, budget-limit, or usage-limit a goal; those status changes are controlled by the user or system.\nWhen marking a budgeted goal achieved with status `complete`, report the final token usage from the tool result to the user.";

const STATUS_DESCRIPTION: &str = "Required. `paused` requires an explicit user request. Set to `complete` only when the objective is achieved and no required work remains. Set to `blocked` only after the same blocking condition has recurred for at least three consecutive goal turns and the agent is at an impasse. After a previously blocked goal is resumed, the resumed run starts a fresh blocked audit.";

impl ToolHandler for UpdateGoalHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "update_goal".into(),
            description: DESCRIPTION.into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "status": {
                        "type": "string",
                        "description": STATUS_DESCRIPTION,
                        "enum": ["complete", "blocked", "paused"]
                    }
                },
                "required": ["status"],
                "additionalProperties": false
            }),
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            let args: UpdateGoalArgs = match parse("update_goal", &ctx.call.payload) {
                Ok(args) => args,
                Err(message) => return ToolOutcome::error(message),
            };
            let status = match args.status {
                ModelStatus::Complete => GoalStatus::Complete,
                ModelStatus::Blocked => GoalStatus::Blocked,
                ModelStatus::Paused => GoalStatus::Paused,
            };
            ask(&ctx, GoalRequest::Update { status }).await
        })
    }
}
