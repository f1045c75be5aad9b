//! Goals end to end: `create_goal`/`get_goal`/`update_goal` as Codex 0.169 answers them, the
//! automatic follow-up turns of an active goal (each its own turn, bounded by
//! `max_goal_turns` and by the token budget), `exec --goal`, bad budgets, and the goal
//! coming back on resume.

use serde_json::{json, Value};
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, Harness};

fn call(call_id: &str, name: &str, args: Value) -> MockResponse {
    MockResponse::tool_calls(vec![(call_id, name, args.to_string())])
}

/// The text output of `call_id` in a request body.
fn output_of(body: &Value, call_id: &str) -> String {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == call_id)
        .and_then(|item| item["output"].as_str())
        .unwrap_or_else(|| panic!("no output for {call_id}"))
        .to_string()
}

fn count(lines: &[Value], kind: &str) -> usize {
    lines.iter().filter(|l| l["type"] == kind).count()
}

/// The last user message of a request.
fn last_user_text(body: &Value) -> String {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|item| item["role"] == "user")
        .map(|item| item["content"].to_string())
        .unwrap_or_default()
}

#[test]
fn an_active_goal_continues_in_its_own_turn_until_the_model_completes_it() {
    let h = Harness::new(vec![
        call(
            "c1",
            "create_goal",
            json!({"objective": "ship the release"}),
        ),
        MockResponse::text("first step done"),
        call("c2", "update_goal", json!({"status": "complete"})),
        MockResponse::text("shipped"),
    ]);
    let out = h.exec(&["--json", "please pursue the goal"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(count(&lines, "turn.started"), 2, "{lines:?}");
    assert_eq!(count(&lines, "turn.completed"), 2);
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 4);
    let created: Value = serde_json::from_str(&output_of(&requests[1].body, "c1")).unwrap();
    assert_eq!(created["goal"]["objective"], "ship the release");
    assert_eq!(created["goal"]["status"], "active");
    assert_eq!(created["remainingTokens"], Value::Null);
    let follow_up = last_user_text(&requests[2].body);
    assert!(follow_up.contains("<goal_continuation>"), "{follow_up}");
    assert!(follow_up.contains("ship the release"));
    let done: Value = serde_json::from_str(&output_of(&requests[3].body, "c2")).unwrap();
    assert_eq!(done["goal"]["status"], "complete");
    assert!(done["completionBudgetReport"]
        .as_str()
        .unwrap()
        .starts_with("Goal achieved."));
    assert!(done["goal"]["tokensUsed"].as_u64().unwrap() > 0);
}

#[test]
fn follow_up_turns_stop_at_max_goal_turns() {
    let h = Harness::new(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("three"),
        MockResponse::text("never asked for"),
    ]);
    let out = h.exec(&["--json", "-c", "max_goal_turns=2", "--goal", "keep going"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(h.mock.requests().len(), 3);
    assert_eq!(count(&json_lines(&out), "turn.completed"), 3);
    // Without a prompt, the objective is the prompt.
    assert!(last_user_text(&h.mock.requests()[0].body).contains("keep going"));
}

#[test]
fn the_token_budget_ends_the_goal() {
    // Each text response counts 100 input tokens and a few output tokens.
    let h = Harness::new(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("never asked for"),
    ]);
    let out = h.exec(&["--goal", "spend", "--goal-budget", "150", "work"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(h.mock.requests().len(), 2);
    assert!(
        stderr(&out).contains("goal budget_limited: spend"),
        "{}",
        stderr(&out)
    );
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    assert!(rollout.contains("\"status\":\"budget_limited\""));
}

#[test]
fn a_goal_budget_must_be_positive() {
    let h = Harness::new(vec![
        call(
            "c1",
            "create_goal",
            json!({"objective": "x", "token_budget": 0}),
        ),
        call(
            "c2",
            "create_goal",
            json!({"objective": "x", "token_budget": -5}),
        ),
        MockResponse::text("ok"),
    ]);
    for budget in ["0", "-3", "lots"] {
        let out = h.exec(&["--goal", "x", "--goal-budget", budget, "hi"]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("--goal-budget"), "{}", stderr(&out));
    }
    assert!(h.mock.requests().is_empty());
    let out = h.exec(&["hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &h.mock.requests()[2].body;
    for id in ["c1", "c2"] {
        assert!(
            output_of(body, id).starts_with("goal budgets must be positive"),
            "{}",
            output_of(body, id)
        );
    }
}

#[test]
fn the_goal_tools_refuse_what_codex_refuses() {
    let h = Harness::new(vec![
        call("c1", "get_goal", json!({})),
        call("c2", "update_goal", json!({"status": "complete"})),
        call("c3", "create_goal", json!({"objective": "first"})),
        call("c4", "create_goal", json!({"objective": "second"})),
        call("c5", "update_goal", json!({"status": "active"})),
        call("c6", "update_goal", json!({"status": "paused"})),
        MockResponse::text("ok"),
    ]);
    let out = h.exec(&["hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &h.mock.requests()[6].body;
    let none: Value = serde_json::from_str(&output_of(body, "c1")).unwrap();
    assert_eq!(
        none,
        json!({"goal": null, "remainingTokens": null, "completionBudgetReport": null})
    );
    assert!(output_of(body, "c2").contains("there is no goal"));
    assert!(output_of(body, "c4").starts_with("cannot create a new goal"));
    assert!(output_of(body, "c5").contains("invalid arguments for update_goal"));
    assert!(output_of(body, "c6").contains("\"status\":\"paused\""));
    // Paused: no follow-up turn.
    assert_eq!(h.mock.requests().len(), 7);
}

#[test]
fn a_resumed_thread_gets_its_goal_back() {
    let h = Harness::new(vec![
        call(
            "c1",
            "create_goal",
            json!({"objective": "remember me", "token_budget": 9000}),
        ),
        MockResponse::text("noted"),
        call("c2", "get_goal", json!({})),
        MockResponse::text("still here"),
    ]);
    let out = h.exec(&["-c", "max_goal_turns=0", "set a goal"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = h.exec(&["-c", "max_goal_turns=0", "resume", "--last", "what is it?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got: Value = serde_json::from_str(&output_of(&h.mock.requests()[3].body, "c2")).unwrap();
    assert_eq!(got["goal"]["objective"], "remember me");
    assert_eq!(got["goal"]["status"], "active");
    assert_eq!(got["goal"]["tokenBudget"], 9000);
    assert!(got["remainingTokens"].as_u64().unwrap() < 9000);
}
