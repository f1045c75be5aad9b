use super::*;

#[test]
fn piped_text_is_appended_as_a_stdin_block() {
    assert_eq!(
        with_stdin_block("review this", "a\nb"),
        "review this\n\n<stdin>\na\nb\n</stdin>"
    );
    assert_eq!(
        with_stdin_block("review this", "a\n"),
        "review this\n\n<stdin>\na\n</stdin>"
    );
}

#[test]
fn blank_stdin_leaves_the_prompt_alone() {
    assert_eq!(with_stdin_block("p", " \n\t"), "p");
}
