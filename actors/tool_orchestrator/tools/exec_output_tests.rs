use super::*;

#[test]
fn short_text_is_kept() {
    assert_eq!(truncate_middle("hello", 10), "hello");
}

#[test]
fn long_text_keeps_head_and_tail_on_char_boundaries() {
    let text = format!("{}{}{}", "a".repeat(10), "é".repeat(50), "z".repeat(10));
    let cut = truncate_middle(&text, 20);
    assert!(cut.starts_with("aaaaaaaaaa"), "{cut}");
    assert!(cut.ends_with("zzzzzzzzzz"), "{cut}");
    assert!(cut.contains("bytes omitted"), "{cut}");
}

#[test]
fn outcome_names_session_or_exit_code() {
    let running = Collected {
        output: b"prompt> ".to_vec(),
        exit_code: None,
    };
    let text = outcome(Instant::now(), &running, Some(3), 100).content;
    assert!(
        text.contains("Process running with session ID 3\nOutput:\nprompt> "),
        "{text}"
    );
    let exited = Collected {
        output: b"bye\n".to_vec(),
        exit_code: Some(2),
    };
    let result = outcome(Instant::now(), &exited, None, 100);
    assert!(result
        .content
        .contains("Process exited with code 2\nOutput:\nbye\n"));
    assert!(!result.success);
}
