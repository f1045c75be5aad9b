use super::*;
use crossterm::event::KeyModifiers;
use troupe_messages::questions::QuestionOption;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn question(id: &str) -> UserQuestion {
    UserQuestion {
        id: id.into(),
        header: "Pick".into(),
        question: format!("{id}?"),
        options: vec![
            QuestionOption {
                label: "A (Recommended)".into(),
                description: "a".into(),
            },
            QuestionOption {
                label: "B".into(),
                description: "b".into(),
            },
        ],
    }
}

#[test]
fn each_question_is_answered_in_turn() {
    let mut pending = PendingQuestions::new(0, "q1".into(), vec![question("x"), question("y")]);
    assert_eq!(pending.on_key(key(KeyCode::Down)), None);
    assert_eq!(pending.on_key(key(KeyCode::Enter)), None);
    let answers = pending
        .on_key(key(KeyCode::Char('1')))
        .expect("all answered");
    assert_eq!(answers["x"].answers, vec!["B".to_string()]);
    assert_eq!(answers["y"].answers, vec!["A (Recommended)".to_string()]);
}

#[test]
fn esc_answers_nothing_and_stray_digits_are_ignored() {
    let mut pending = PendingQuestions::new(0, "q1".into(), vec![question("x")]);
    assert_eq!(pending.on_key(key(KeyCode::Char('7'))), None);
    assert_eq!(
        pending.on_key(key(KeyCode::Esc)),
        Some(UserInputAnswers::new())
    );
}
