//! What the goal tools share: asking the thread's session to read or change its goal, and
//! the report the model reads back, in Codex 0.169's shape
//! (`{"goal":…,"remainingTokens":…,"completionBudgetReport":…}`).

use crate::tool_orchestrator::contract::{ToolContext, ToolOutcome};
use ractor::rpc::CallResult;
use serde_json::json;
use std::time::Duration;
use troupe_messages::goals::{GoalRequest, GoalStatus, ThreadGoal};
use troupe_messages::mailboxes::SessionMsg;

/// The session answers from its handler; this only bounds a session that is gone.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Codex's instruction to the model once a goal is achieved.
const COMPLETION_REPORT: &str = "Goal achieved. Report final usage from this tool result's \
structured goal fields. If `goal.tokenBudget` is present, include token usage from \
`goal.tokensUsed` and `goal.tokenBudget`. If `goal.timeUsedSeconds` is greater than 0, \
summarize elapsed time in a concise, human-friendly form appropriate to the response language.";

/// Sends `request` to the session and turns its answer into the tool's outcome.
pub async fn ask(ctx: &ToolContext, request: GoalRequest) -> ToolOutcome {
    let answer = ctx
        .session
        .call(
            |reply| SessionMsg::Goal { request, reply },
            Some(CALL_TIMEOUT),
        )
        .await;
    match answer {
        Ok(CallResult::Success(Ok(goal))) => ToolOutcome::ok(report(goal.as_ref())),
        Ok(CallResult::Success(Err(why))) => ToolOutcome::error(why),
        Ok(CallResult::Timeout) | Ok(CallResult::SenderError) | Err(_) => {
            ToolOutcome::error("the thread did not answer about its goal")
        }
    }
}

/// The JSON report of a goal (or of none).
pub fn report(goal: Option<&ThreadGoal>) -> String {
    let remaining = goal.and_then(ThreadGoal::remaining_tokens);
    let completion = goal
        .filter(|g| g.status == GoalStatus::Complete)
        .map(|_| COMPLETION_REPORT);
    json!({
        "goal": goal,
        "remainingTokens": remaining,
        "completionBudgetReport": completion,
    })
    .to_string()
}
