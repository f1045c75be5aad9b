use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": false
    })
}

#[test]
fn a_conforming_answer_passes() {
    assert_eq!(check_answer(&schema(), Some(r#"{"answer": 4}"#)), Ok(()));
}

#[test]
fn a_wrong_type_or_missing_key_or_prose_fails_with_the_reason() {
    let err = check_answer(&schema(), Some(r#"{"answer": "four"}"#)).unwrap_err();
    assert!(err.contains("/answer"), "{err}");
    let err = check_answer(&schema(), Some("{}")).unwrap_err();
    assert!(err.contains("answer"), "{err}");
    let err = check_answer(&schema(), Some("four")).unwrap_err();
    assert!(err.contains("not JSON"), "{err}");
    assert!(check_answer(&schema(), None).is_err());
}

#[test]
fn a_schema_that_is_not_one_is_refused() {
    assert!(check_schema(&json!({"type": "no-such-type"})).is_err());
    assert!(check_schema(&json!([1, 2])).is_err());
    assert!(check_schema(&json!({"type": "object", "minProperties": -1})).is_err());
    assert!(check_schema(&schema()).is_ok());
}
