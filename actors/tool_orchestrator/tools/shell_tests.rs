use super::{format_for_model, parse_shell_args};
use std::time::Duration;
use troupe_messages::tools::{ExecResult, ToolPayload};

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

#[test]
fn model_output_shape() {
    let exec = ExecResult {
        exit_code: None,
        stdout: String::new(),
        stderr: String::new(),
        aggregated_output: "partial".into(),
        truncated_bytes: 0,
        duration: Duration::from_millis(1234),
        timed_out: true,
    };
    let value: serde_json::Value =
        serde_json::from_str(&format_for_model(&exec, Duration::from_millis(1000))).unwrap();
    assert_eq!(value["metadata"]["exit_code"], -1);
    assert_eq!(value["metadata"]["timed_out"], true);
    assert_eq!(value["metadata"]["duration_seconds"], 1.2);
    assert_eq!(
        value["output"],
        "command timed out after 1000 milliseconds\npartial"
    );
}
