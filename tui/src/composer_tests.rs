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

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn with_history(entries: &[&str]) -> Composer {
    let mut c = Composer::default();
    c.load_history(
        entries
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
    );
    c
}

#[test]
fn ctrl_r_finds_the_newest_entry_holding_the_query_then_older_ones() {
    let mut c = with_history(&["fix the parser", "run the tests", "fix the lexer"]);
    type_text(&mut c, "draft");
    c.handle_key(ctrl('r'));
    assert_eq!(c.search_prompt(), Some(("", false)));
    type_text(&mut c, "fix");
    assert_eq!(c.text(), "fix the lexer");
    assert_eq!(c.search_prompt(), Some(("fix", true)));
    c.handle_key(ctrl('r'));
    assert_eq!(c.text(), "fix the parser");
    // No older match: the oldest one stays.
    c.handle_key(ctrl('r'));
    assert_eq!(c.text(), "fix the parser");
    // Enter keeps it to edit; it is not sent.
    assert_eq!(c.handle_key(key(KeyCode::Enter)), ComposerOutcome::Edited);
    assert_eq!(c.search_prompt(), None);
    assert_eq!(c.text(), "fix the parser");
}

#[test]
fn esc_ends_the_search_with_the_text_typed_before_it() {
    let mut c = with_history(&["run the tests"]);
    type_text(&mut c, "draft");
    c.handle_key(ctrl('r'));
    type_text(&mut c, "tests");
    assert_eq!(c.text(), "run the tests");
    c.handle_key(key(KeyCode::Esc));
    assert_eq!(c.text(), "draft");
    assert_eq!(c.search_prompt(), None);
}

#[test]
fn a_query_nothing_holds_is_failing_and_backspace_recovers() {
    let mut c = with_history(&["run the tests"]);
    c.handle_key(ctrl('r'));
    type_text(&mut c, "testz");
    assert_eq!(c.search_prompt(), Some(("testz", false)));
    c.handle_key(key(KeyCode::Backspace));
    assert_eq!(c.search_prompt(), Some(("test", true)));
    assert_eq!(c.text(), "run the tests");
}

#[test]
fn a_recalled_entry_counts_as_browsing_until_the_draft_is_back() {
    let mut c = with_history(&["/compact"]);
    assert!(!c.is_browsing_history());
    c.handle_key(key(KeyCode::Up));
    assert_eq!(c.text(), "/compact");
    assert!(c.is_browsing_history());
    c.handle_key(key(KeyCode::Down));
    assert!(!c.is_browsing_history());
}
