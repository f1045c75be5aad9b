use super::*;
use pretty_assertions::assert_eq;
use std::path::PathBuf;
use troupe_messages::permissions::{FileSystemPermissions, NetworkPermissions};

fn function(arguments: &str) -> ToolPayload {
    ToolPayload::Function {
        arguments: arguments.into(),
    }
}

#[test]
fn the_spec_is_codex_0_169s() {
    let ToolSpec::Function {
        name,
        strict,
        parameters,
        ..
    } = RequestPermissionsHandler.spec()
    else {
        panic!("function tool expected");
    };
    assert_eq!(name, "request_permissions");
    assert!(!strict);
    assert_eq!(parameters["required"], json!(["permissions"]));
    assert_eq!(
        parameters["properties"]["permissions"]["properties"]["network"]["properties"]["enabled"]
            ["type"],
        json!("boolean")
    );
}

#[test]
fn arguments_are_checked() {
    let args = parse_args(&function(
        r#"{"permissions":{"file_system":{"write":["/tmp/x"]},"network":{"enabled":true}},"reason":"build"}"#,
    ))
    .unwrap();
    assert_eq!(args.permissions.write_paths(), &[PathBuf::from("/tmp/x")]);
    assert!(args.permissions.wants_network());
    assert_eq!(args.reason.as_deref(), Some("build"));
    let err = parse_args(&function(r#"{"permissions":{"disk":{}}}"#)).unwrap_err();
    assert!(err.contains("unknown field `disk`"), "{err}");
    let err = parse_args(&function(r#"{"permissions":{},"environment_id":"other"}"#)).unwrap_err();
    assert!(err.contains("omit environment_id"), "{err}");
    assert!(parse_args(&ToolPayload::Custom { input: "x".into() }).is_err());
}

#[test]
fn answers_have_codexs_shape() {
    assert_eq!(
        answer(&RequestedPermissions::default(), GrantScope::Turn),
        r#"{"permissions":{"network":null,"file_system":null},"scope":"turn"}"#
    );
    let granted = RequestedPermissions {
        network: Some(NetworkPermissions {
            enabled: Some(true),
        }),
        file_system: Some(FileSystemPermissions {
            read: None,
            write: Some(vec![PathBuf::from("/data")]),
        }),
    };
    assert_eq!(
        answer(&granted, GrantScope::Session),
        r#"{"permissions":{"network":{"enabled":true},"file_system":{"write":["/data"]}},"scope":"session"}"#
    );
    assert_eq!(
        approval_command(&granted),
        vec!["request_permissions", "--write", "/data", "--network"]
    );
}
