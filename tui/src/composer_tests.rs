use super::*;
use crossterm::event::{KeyEvent, KeyModifiers};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn type_text(c: &mut Composer, text: &str) {
    for ch in text.chars() {
        c.handle_key(key(KeyCode::Char(ch)));
    }
}

#[test]
fn enter_sends_and_ctrl_j_or_shift_enter_break_lines() {
    let mut c = Composer::default();
    type_text(&mut c, "one");
    c.handle_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
    type_text(&mut c, "two");
    c.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    type_text(&mut c, "three");
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerOutcome::Submitted("one\ntwo\nthree".into())
    );
    assert!(c.is_empty());
}

#[test]
fn history_browses_with_up_and_down() {
    let mut c = Composer::default();
    type_text(&mut c, "first");
    c.handle_key(key(KeyCode::Enter));
    type_text(&mut c, "second");
    c.handle_key(key(KeyCode::Enter));
    type_text(&mut c, "draft");
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "second");
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "first");
    c.handle_key(key(KeyCode::Down));
    c.handle_key(key(KeyCode::Down));
    assert_eq!(c.text(), "draft");
}

#[test]
fn a_large_paste_is_a_placeholder_but_sent_whole() {
    let mut c = Composer::default();
    let pasted: String = (0..200).map(|n| format!("line {n}\n")).collect();
    c.paste(&pasted);
    assert!(c.text().starts_with("[Pasted 200 lines"), "{}", c.text());
    assert_eq!(
        c.handle_key(key(KeyCode::Enter)),
        ComposerOutcome::Submitted(pasted)
    );
}

#[test]
fn editing_handles_wide_characters() {
    let mut c = Composer::default();
    type_text(&mut c, "日本");
    assert_eq!(c.cursor_position(), (0, 4));
    c.handle_key(key(KeyCode::Backspace));
    assert_eq!(c.text(), "日");
}
