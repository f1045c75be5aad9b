use super::*;

fn payload(arguments: &str) -> ToolPayload {
    ToolPayload::Function {
        arguments: arguments.into(),
    }
}

#[test]
fn valid_plan_parses() {
    let args = parse_plan_args(&payload(
        r#"{"explanation":"why","plan":[{"step":"a","status":"completed"},{"step":"b","status":"in_progress"},{"step":"c","status":"pending"}]}"#,
    ))
    .expect("valid");
    assert_eq!(args.explanation.as_deref(), Some("why"));
    let statuses: Vec<StepStatus> = args.plan.iter().map(|item| item.status).collect();
    assert_eq!(
        statuses,
        vec![
            StepStatus::Completed,
            StepStatus::InProgress,
            StepStatus::Pending
        ]
    );
}

#[test]
fn bad_plans_are_errors() {
    let cases = [
        (
            r#"{"plan":[{"step":"a","status":"done"}]}"#,
            "unknown variant `done`",
        ),
        (r#"{"steps":[]}"#, "unknown field `steps`"),
        (
            r#"{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}"#,
            "at most one may be",
        ),
        ("not json", "invalid arguments for update_plan"),
    ];
    for (arguments, expected) in cases {
        let error = parse_plan_args(&payload(arguments)).expect_err(arguments);
        assert!(error.contains(expected), "{arguments}: {error}");
    }
}
