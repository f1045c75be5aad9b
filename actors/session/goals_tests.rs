use super::*;
use troupe_messages::ids::ThreadId;

fn create(goal: &mut Option<ThreadGoal>, budget: Option<i64>) -> Result<bool, String> {
    apply_request(
        goal,
        GoalRequest::Create {
            objective: " ship it ".into(),
            token_budget: budget,
        },
        ThreadId::new(),
    )
}

#[test]
fn budgets_must_be_positive_and_objectives_not_empty() {
    let mut goal = None;
    assert!(create(&mut goal, Some(0)).unwrap_err().contains("positive"));
    assert!(create(&mut goal, Some(-1))
        .unwrap_err()
        .contains("positive"));
    let empty = GoalRequest::Create {
        objective: "  ".into(),
        token_budget: None,
    };
    assert!(apply_request(&mut goal, empty, ThreadId::new()).is_err());
    assert!(goal.is_none());
    assert!(create(&mut goal, Some(10)).unwrap());
    let created = goal.clone().unwrap();
    assert_eq!(created.objective, "ship it");
    assert_eq!(created.remaining_tokens(), Some(10));
}

#[test]
fn an_unfinished_goal_blocks_a_new_one_until_complete() {
    let mut goal = None;
    create(&mut goal, None).unwrap();
    assert!(create(&mut goal, None).unwrap_err().contains("unfinished"));
    let paused = GoalRequest::Update {
        status: GoalStatus::Paused,
    };
    apply_request(&mut goal, paused, ThreadId::new()).unwrap();
    assert!(create(&mut goal, None).is_err());
    let done = GoalRequest::Update {
        status: GoalStatus::Complete,
    };
    apply_request(&mut goal, done, ThreadId::new()).unwrap();
    assert!(create(&mut goal, None).unwrap());
}

#[test]
fn the_model_cannot_set_runtime_statuses() {
    let mut goal = None;
    let active = GoalRequest::Update {
        status: GoalStatus::Active,
    };
    assert!(apply_request(&mut goal, active.clone(), ThreadId::new())
        .unwrap_err()
        .contains("no goal"));
    create(&mut goal, None).unwrap();
    assert!(apply_request(&mut goal, active, ThreadId::new()).is_err());
}

#[test]
fn the_continuation_prompt_names_the_objective_and_the_budget_left() {
    let mut goal = None;
    create(&mut goal, Some(100)).unwrap();
    let mut goal = goal.unwrap();
    goal.tokens_used = 40;
    let prompt = continuation_prompt(&goal);
    assert!(prompt.contains("Objective: ship it"), "{prompt}");
    assert!(prompt.contains("60 of 100"), "{prompt}");
}
