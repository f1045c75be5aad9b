//! A thread's goal: an objective the model works toward across turns, with an optional token
//! budget. While it is active the session starts follow-up turns by itself (bounded by the
//! budget and `max_goal_turns`). Field names and statuses follow Codex 0.169's goal tools.

use crate::ids::ThreadId;
use serde::{Deserialize, Serialize};

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Being worked on: each turn's end starts a follow-up turn.
    Active,
    /// The user asked to pause it.
    Paused,
    /// The model reported the same impasse repeatedly.
    Blocked,
    /// Achieved.
    Complete,
    /// Its token budget is spent (set by the runtime, never by the model).
    BudgetLimited,
}

impl GoalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::Blocked => "blocked",
            GoalStatus::Complete => "complete",
            GoalStatus::BudgetLimited => "budget_limited",
        }
    }

    /// Whether a new goal may replace it (`create_goal` refuses while it is unfinished).
    pub fn is_finished(self) -> bool {
        matches!(self, GoalStatus::Complete | GoalStatus::BudgetLimited)
    }
}

/// A thread's goal, as the goal tools report it (camelCase, as Codex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoal {
    pub thread_id: ThreadId,
    pub objective: String,
    pub status: GoalStatus,
    /// Tokens the goal may spend (total tokens of the responses sampled while it is active).
    pub token_budget: Option<u64>,
    pub tokens_used: u64,
    pub time_used_seconds: u64,
    /// Unix seconds.
    pub created_at: i64,
    pub updated_at: i64,
}

impl ThreadGoal {
    /// Tokens left under the budget (`None` without one).
    pub fn remaining_tokens(&self) -> Option<u64> {
        self.token_budget
            .map(|budget| budget.saturating_sub(self.tokens_used))
    }
}

/// What a goal tool (or a client) asks of the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum GoalRequest {
    Get,
    /// Start a goal; refused while an unfinished one exists. A budget must be positive.
    Create {
        objective: String,
        token_budget: Option<i64>,
    },
    /// The model may only set `complete`, `blocked` or `paused`.
    Update {
        status: GoalStatus,
    },
}
