use super::*;

#[test]
fn auto_follows_the_terminal_and_no_color() {
    assert!(resolve(ColorArg::Auto, true, false));
    assert!(!resolve(ColorArg::Auto, true, true));
    assert!(!resolve(ColorArg::Auto, false, false));
    assert!(resolve(ColorArg::Always, false, true));
    assert!(!resolve(ColorArg::Never, true, false));
}

#[test]
fn labels_and_outcomes_are_styled_and_the_rest_is_not() {
    assert_eq!(paint("exec\nls in /x"), "\x1b[35mexec\x1b[0m\nls in /x");
    assert_eq!(
        paint("succeeded in 3ms:"),
        "\x1b[32msucceeded in 3ms:\x1b[0m"
    );
    assert_eq!(
        paint("exited 1 in 3ms:\nboom"),
        "\x1b[31mexited 1 in 3ms:\x1b[0m\nboom"
    );
    assert_eq!(paint("plain text"), "plain text");
}
