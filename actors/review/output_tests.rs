use super::*;
use serde_json::json;

fn finding(title: &str, priority: Option<u8>, start: u64, end: u64) -> serde_json::Value {
    json!({
        "title": title,
        "body": "Why it breaks.",
        "confidence_score": 0.8,
        "priority": priority,
        "code_location": {"absolute_file_path": "/repo/a.rs", "line_range": {"start": start, "end": end}}
    })
}

fn review(findings: Vec<serde_json::Value>) -> serde_json::Value {
    json!({
        "findings": findings,
        "overall_correctness": "patch is incorrect",
        "overall_explanation": "One bug.",
        "overall_confidence_score": 0.7
    })
}

#[test]
fn renders_one_finding_as_codex_does() {
    let parsed = parse(&review(vec![finding("[P1] Off by one", Some(1), 2, 3)]).to_string())
        .expect("a valid review");
    assert_eq!(
        render(&parsed),
        "One bug.\n\nReview comment:\n\n- [P1] Off by one — /repo/a.rs:2-3\n  Why it breaks."
    );
}

#[test]
fn renders_several_findings_under_full_review_comments() {
    let parsed = parse(
        &review(vec![
            finding("[P1] A", Some(1), 2, 3),
            finding("[P3] B", None, 7, 7),
        ])
        .to_string(),
    )
    .expect("a valid review");
    let text = render(&parsed);
    assert!(text.starts_with("One bug.\n\nFull review comments:\n\n- [P1] A"));
    assert!(text.ends_with("- [P3] B — /repo/a.rs:7-7\n  Why it breaks."));
}

#[test]
fn no_findings_is_just_the_explanation() {
    let parsed = parse(
        &json!({"findings": [], "overall_correctness": "patch is correct",
                "overall_explanation": "Looks fine."})
        .to_string(),
    )
    .expect("valid");
    assert_eq!(render(&parsed), "Looks fine.");
}

#[test]
fn a_fenced_object_is_accepted() {
    let text = format!("```json\n{}\n```", review(vec![]));
    assert!(parse(&text).is_ok());
}

#[test]
fn bad_answers_are_named() {
    assert_eq!(parse("  "), Err(ReviewFormatError::Empty));
    assert!(matches!(
        parse("not json at all"),
        Err(ReviewFormatError::NotJson(_))
    ));
    assert!(matches!(
        parse(&review(vec![finding("x", Some(7), 1, 1)]).to_string()),
        Err(ReviewFormatError::Priority { priority: 7, .. })
    ));
    assert!(matches!(
        parse(&review(vec![finding("x", Some(1), 5, 2)]).to_string()),
        Err(ReviewFormatError::LineRange {
            start: 5,
            end: 2,
            ..
        })
    ));
    let mut wrong_verdict = review(vec![]);
    wrong_verdict["overall_correctness"] = json!("maybe");
    assert!(matches!(
        parse(&wrong_verdict.to_string()),
        Err(ReviewFormatError::Verdict(_))
    ));
    let mut missing_location = review(vec![finding("x", Some(1), 1, 1)]);
    missing_location["findings"][0]
        .as_object_mut()
        .unwrap()
        .remove("code_location");
    assert!(matches!(
        parse(&missing_location.to_string()),
        Err(ReviewFormatError::NotJson(_))
    ));
}
