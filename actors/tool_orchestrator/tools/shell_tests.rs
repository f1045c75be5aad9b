use super::parse_shell_args;
use troupe_messages::tools::ToolPayload;

fn function(arguments: &str) -> ToolPayload {
    ToolPayload::Function {
        arguments: arguments.into(),
    }
}

#[test]
fn valid_arguments_parse() {
    let args = parse_shell_args(&function(
        r#"{"command":["ls","-l"],"workdir":"sub","timeout_ms":5}"#,
    ))
    .unwrap();
    assert_eq!(args.command, vec!["ls", "-l"]);
    assert_eq!(args.workdir.as_deref(), Some("sub"));
    assert_eq!(args.timeout_ms, Some(5));
}

#[test]
fn invalid_arguments_say_what_is_wrong() {
    let err = parse_shell_args(&function("{not json")).unwrap_err();
    assert!(err.starts_with("invalid arguments for shell"), "{err}");
    let err = parse_shell_args(&function(r#"{"command":"ls"}"#)).unwrap_err();
    assert!(err.contains("invalid type"), "{err}");
    let err = parse_shell_args(&function(r#"{"command":[]}"#)).unwrap_err();
    assert!(err.contains("must name a program"), "{err}");
    let err = parse_shell_args(&function(r#"{"command":["ls"],"bogus":1}"#)).unwrap_err();
    assert!(err.contains("bogus"), "{err}");
}
