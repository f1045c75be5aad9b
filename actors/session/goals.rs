//! The thread's goal (`get_goal`, `create_goal`, `update_goal`, `exec --goal`, `/goal`): its
//! state, the tokens and time it used, and the follow-up turns it starts by itself.
//!
//! While the goal is active, each turn that completes normally (nothing queued, not in plan
//! mode, not shutting down) is followed by a turn whose input is a continuation prompt, at
//! most `max_goal_turns` in a row (user input resets the count) and never past the token
//! budget (then the goal becomes `budget_limited`). Every change is a `GoalUpdated` event,
//! recorded in the rollout, so a resumed thread gets its goal back; the event at a turn's end
//! says whether a follow-up turn comes (`continuing`), before `TurnComplete`, so a frontend
//! that stops at the end of its turn (`exec`) knows to wait for it.

use super::SessionState;
use std::time::Instant;
use troupe_messages::events::EventMsg;
use troupe_messages::goals::{GoalRequest, GoalStatus, ThreadGoal};
use troupe_messages::ops::UserInput;
use troupe_messages::policy::CollaborationMode;

/// The goal of a thread and what the session needs to drive it.
#[derive(Debug, Default)]
pub struct GoalState {
    pub goal: Option<ThreadGoal>,
    /// Follow-up turns started in a row since the user last wrote.
    auto_turns: u32,
    /// When the running turn started (its wall time counts toward an active goal).
    turn_started: Option<Instant>,
    /// Decided at the end of the last turn: a follow-up turn starts after it.
    continue_next: bool,
    /// The turn being started is a follow-up turn (any other resets `auto_turns`).
    starting_follow_up: bool,
}

impl GoalState {
    /// A thread's goal as its rollout last recorded it.
    pub fn restored(goal: Option<ThreadGoal>) -> Self {
        Self {
            goal,
            ..Self::default()
        }
    }

    fn active(&mut self) -> Option<&mut ThreadGoal> {
        self.goal
            .as_mut()
            .filter(|goal| goal.status == GoalStatus::Active)
    }
}

/// Unix seconds now.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Applies `request` to `goal` (pure): the goal afterwards, or the message the caller reads.
pub fn apply_request(
    goal: &mut Option<ThreadGoal>,
    request: GoalRequest,
    thread_id: troupe_messages::ids::ThreadId,
) -> Result<bool, String> {
    match request {
        GoalRequest::Get => Ok(false),
        GoalRequest::Create {
            objective,
            token_budget,
        } => {
            let objective = objective.trim();
            if objective.is_empty() {
                return Err("the goal's objective is empty".into());
            }
            let token_budget = match token_budget {
                Some(budget) if budget <= 0 => {
                    return Err(format!(
                        "goal budgets must be positive when provided (token_budget = {budget})"
                    ))
                }
                Some(budget) => Some(budget as u64),
                None => None,
            };
            if goal.as_ref().is_some_and(|g| !g.status.is_finished()) {
                return Err(
                    "cannot create a new goal because this thread has an unfinished \
                            goal; complete the existing goal first"
                        .into(),
                );
            }
            let at = now();
            *goal = Some(ThreadGoal {
                thread_id,
                objective: objective.to_string(),
                status: GoalStatus::Active,
                token_budget,
                tokens_used: 0,
                time_used_seconds: 0,
                created_at: at,
                updated_at: at,
            });
            Ok(true)
        }
        GoalRequest::Update { status } => {
            let Some(current) = goal.as_mut() else {
                return Err("there is no goal to update; create one with create_goal".into());
            };
            match status {
                GoalStatus::Complete | GoalStatus::Blocked | GoalStatus::Paused => {}
                GoalStatus::Active | GoalStatus::BudgetLimited => {
                    return Err(format!(
                        "status `{}` is set by the user or the runtime; update_goal accepts \
                         complete, blocked or paused",
                        status.as_str()
                    ))
                }
            }
            if current.status == GoalStatus::BudgetLimited {
                return Err(
                    "the goal's token budget is spent (budget_limited); it cannot be \
                            changed by update_goal"
                        .into(),
                );
            }
            current.status = status;
            current.updated_at = now();
            Ok(true)
        }
    }
}

/// The prompt of a follow-up turn.
pub fn continuation_prompt(goal: &ThreadGoal) -> String {
    let budget = match goal.remaining_tokens() {
        Some(left) => format!(
            "Token budget left: {left} of {}.\n",
            goal.token_budget.unwrap_or(0)
        ),
        None => String::new(),
    };
    format!(
        "<goal_continuation>\nContinue working toward the active goal.\nObjective: {}\n{budget}\
         When the objective is achieved and no required work remains, call update_goal with \
         status `complete`. Follow update_goal's rules before reporting `blocked`.\n\
         </goal_continuation>",
        goal.objective
    )
}

impl SessionState {
    /// A goal tool's (or a client's) request: the goal afterwards, told and recorded when
    /// it changed.
    pub(super) async fn on_goal_request(
        &mut self,
        submission: &str,
        request: GoalRequest,
    ) -> Result<Option<ThreadGoal>, String> {
        let created = matches!(request, GoalRequest::Create { .. });
        let changed = apply_request(&mut self.goals.goal, request, self.thread_id)?;
        if created {
            self.goals.auto_turns = 0;
            if self.turn.is_some() {
                self.goals.turn_started = Some(Instant::now());
            }
        }
        if changed {
            self.tell_goal(submission, false).await;
        }
        Ok(self.goals.goal.clone())
    }

    async fn tell_goal(&mut self, submission: &str, continuing: bool) {
        if let Some(goal) = self.goals.goal.clone() {
            self.emit(submission, EventMsg::GoalUpdated { goal, continuing })
                .await;
        }
    }

    /// A response's tokens count toward an active goal.
    pub(super) fn goal_tokens(&mut self, total_tokens: u64) {
        if let Some(goal) = self.goals.active() {
            goal.tokens_used = goal.tokens_used.saturating_add(total_tokens);
        }
    }

    /// A turn started (its time counts toward an active goal); one the user (or a client)
    /// started begins a new run of follow-up turns.
    pub(super) fn goal_turn_started(&mut self) {
        self.goals.turn_started = Some(Instant::now());
        if !std::mem::take(&mut self.goals.starting_follow_up) {
            self.goals.auto_turns = 0;
        }
    }

    /// A turn completed normally: count its time, spend the budget, and decide (and tell,
    /// before `TurnComplete`) whether a follow-up turn comes.
    pub(super) async fn goal_turn_completed(&mut self, submission: &str, shutting_down: bool) {
        self.goals.continue_next = false;
        let elapsed = self
            .goals
            .turn_started
            .take()
            .map(|t| t.elapsed().as_secs());
        let Some(goal) = self.goals.active() else {
            return;
        };
        goal.time_used_seconds += elapsed.unwrap_or(0);
        goal.updated_at = now();
        if goal.remaining_tokens() == Some(0) {
            goal.status = GoalStatus::BudgetLimited;
        }
        let still_active = goal.status == GoalStatus::Active;
        let continuing = still_active
            && !shutting_down
            && self.queue.is_empty()
            && self.settings.context.collaboration_mode != CollaborationMode::Plan
            && self.goals.auto_turns < self.settings.tools.max_goal_turns;
        self.goals.continue_next = continuing;
        self.tell_goal(submission, continuing).await;
    }

    /// The follow-up turn's input, once the turn that decided it is recorded as complete.
    pub(super) fn take_goal_continuation(&mut self) -> Option<Vec<UserInput>> {
        if !std::mem::take(&mut self.goals.continue_next) {
            return None;
        }
        let goal = self
            .goals
            .goal
            .as_ref()
            .filter(|g| g.status == GoalStatus::Active)?;
        self.goals.auto_turns += 1;
        self.goals.starting_follow_up = true;
        Some(vec![UserInput::Text {
            text: continuation_prompt(goal),
        }])
    }
}

#[cfg(test)]
#[path = "goals_tests.rs"]
mod tests;
