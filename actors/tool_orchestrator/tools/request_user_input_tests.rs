use super::*;
use troupe_messages::questions::QuestionOption;

fn question(id: &str, labels: &[&str]) -> UserQuestion {
    UserQuestion {
        id: id.into(),
        header: "H".into(),
        question: "Which?".into(),
        options: labels
            .iter()
            .map(|l| QuestionOption {
                label: (*l).into(),
                description: "d".into(),
            })
            .collect(),
    }
}

#[test]
fn bad_question_sets_say_what_is_wrong() {
    assert!(check_questions(&[]).unwrap_err().contains("empty"));
    let four: Vec<_> = (0..4).map(|i| question(&format!("q{i}"), &["a"])).collect();
    assert!(check_questions(&four).unwrap_err().contains("at most 3"));
    let twins = [question("a", &["x"]), question("a", &["y"])];
    assert!(check_questions(&twins).unwrap_err().contains("`a`"));
    assert!(check_questions(&[question("a", &["x", "y"])]).is_ok());
}

#[test]
fn the_recommended_answer_is_the_first_option() {
    let answers = recommended_answers(&[question("color", &["Red (Recommended)", "Blue"])]);
    assert_eq!(
        answers_output(&answers),
        r#"{"answers":{"color":{"answers":["Red (Recommended)"]}}}"#
    );
}
