use super::*;

#[test]
fn keys_choose_and_confirm() {
    let none = KeyModifiers::NONE;
    let mut choice = TrustChoice::default();
    assert_eq!(
        choice.on_key(KeyCode::Enter, none),
        Some(TrustAnswer::Trust)
    );
    assert_eq!(choice.on_key(KeyCode::Down, none), None);
    assert_eq!(choice.selected, 1);
    assert_eq!(
        choice.on_key(KeyCode::Enter, none),
        Some(TrustAnswer::DoNotTrust)
    );
    assert_eq!(choice.on_key(KeyCode::Up, none), None);
    assert_eq!(choice.selected, 0);
    assert_eq!(
        choice.on_key(KeyCode::Char('2'), none),
        Some(TrustAnswer::DoNotTrust)
    );
    assert_eq!(
        choice.on_key(KeyCode::Char('1'), none),
        Some(TrustAnswer::Trust)
    );
    assert_eq!(choice.on_key(KeyCode::Esc, none), Some(TrustAnswer::Quit));
    assert_eq!(
        choice.on_key(KeyCode::Char('c'), KeyModifiers::CONTROL),
        Some(TrustAnswer::Quit)
    );
    assert_eq!(choice.on_key(KeyCode::Char('x'), none), None);
}
