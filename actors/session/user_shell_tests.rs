use super::*;

#[test]
fn the_shell_is_the_users_when_absolute() {
    assert_eq!(
        shell_argv(Some("/bin/bash"), "echo hi"),
        vec!["/bin/bash", "-c", "echo hi"]
    );
    assert_eq!(shell_argv(Some("zsh"), "ls")[0], "/bin/sh");
    assert_eq!(shell_argv(None, "ls")[0], "/bin/sh");
}

#[test]
fn the_record_names_command_exit_and_output() {
    let text = record_text(
        "echo hi",
        Some(0),
        false,
        Duration::from_millis(1500),
        "hi\n",
    );
    assert_eq!(
        text,
        "<user_shell_command>\n<command>\necho hi\n</command>\n<result>\nExit code: 0\n\
         Duration: 1.5000 seconds\nOutput:\nhi\n</result>\n</user_shell_command>"
    );
}

#[test]
fn an_interrupted_or_killed_command_says_so() {
    let interrupted = record_text("sleep 9", None, true, Duration::ZERO, "");
    assert!(interrupted.contains("Exit code: none (interrupted by the user)"));
    let killed = record_text("sleep 9", None, false, Duration::ZERO, "");
    assert!(killed.contains("Exit code: none (killed by a signal)"));
    // The user's word wins over whatever code a killed shell reported.
    let stopped = record_text("sleep 9", Some(137), true, Duration::ZERO, "");
    assert!(stopped.contains("interrupted by the user"));
}
