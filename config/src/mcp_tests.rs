//! `[mcp_servers.<id>]`: Codex's keys resolve; unknown or misplaced keys name file and line.

use crate::error::ConfigError;
use crate::resolve::{load_settings, CliOverrides};
use pretty_assertions::assert_eq;
use troupe_messages::mcp::{McpToolApproval, McpTransport};

fn load(config: &str) -> Result<troupe_messages::settings::SessionSettings, ConfigError> {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    let cli = CliOverrides {
        cwd: Some("/tmp".into()),
        ..CliOverrides::default()
    };
    load_settings(home.path(), &cli)
}

#[test]
fn codex_keys_resolve_into_settings() {
    let settings = load(
        r#"
[mcp_servers.docs]
command = "npx"
args = ["-y", "server"]
env = { A = "1" }
env_vars = ["HOME", { name = "PATH", source = "local" }]
cwd = "/srv"
startup_timeout_sec = 2.5
tool_timeout_sec = 30
default_tools_approval_mode = "prompt"
enabled_tools = ["a", "b"]
disabled_tools = ["b"]

[mcp_servers.docs.tools.a]
approval_mode = "approve"

[mcp_servers.remote]
url = "https://example.invalid/mcp"
bearer_token_env_var = "TOKEN"
http_headers = { X = "y" }
enabled = false
"#,
    )
    .unwrap();
    let docs = &settings.mcp_servers["docs"];
    assert_eq!(
        docs.transport,
        McpTransport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server".into()],
            env: [("A".to_string(), "1".to_string())].into(),
            env_vars: vec!["HOME".into(), "PATH".into()],
            cwd: Some("/srv".into()),
        }
    );
    assert_eq!(docs.startup_timeout_ms, 2500);
    assert_eq!(docs.tool_timeout_ms, 30_000);
    assert_eq!(docs.approval_mode_for("a"), McpToolApproval::Approve);
    assert_eq!(docs.approval_mode_for("c"), McpToolApproval::Prompt);
    assert!(docs.allows_tool("a"));
    assert!(!docs.allows_tool("b"), "disabled after enabled");
    assert!(!docs.allows_tool("c"), "not in enabled_tools");
    let remote = &settings.mcp_servers["remote"];
    assert!(!remote.enabled);
    assert_eq!(remote.default_tools_approval_mode, McpToolApproval::Auto);
    assert!(
        matches!(&remote.transport, McpTransport::StreamableHttp { url, .. } if url == "https://example.invalid/mcp")
    );
}

#[test]
fn an_unknown_key_names_file_line_and_key() {
    let err = load("model = \"m\"\n\n[mcp_servers.docs]\ncommand = \"x\"\ncomand_args = [\"y\"]\n")
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ConfigError::Located { .. }), "{text}");
    assert!(text.contains("config.toml:"), "{text}");
    assert!(text.contains("mcp_servers.docs"), "{text}");
    assert!(text.contains("comand_args"), "{text}");
}

#[test]
fn keys_of_the_other_transport_and_unsupported_keys_are_errors() {
    for (config, needle) in [
        (
            "[mcp_servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n",
            "not both",
        ),
        (
            "[mcp_servers.a]\nurl = \"http://h\"\nargs = [\"x\"]\n",
            "`args` is not supported",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\nbearer_token_env_var = \"T\"\n",
            "not supported for stdio",
        ),
        ("[mcp_servers.a]\nargs = [\"x\"]\n", "needs `command`"),
        (
            "[mcp_servers.a]\ncommand = \"x\"\noauth = { client_id = \"c\" }\n",
            "OAuth",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\ndefault_tools_approval_mode = \"sometimes\"\n",
            "sometimes",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\ntools.t.approval = \"approve\"\n",
            "approval",
        ),
        (
            "[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_sec = -1\n",
            "seconds",
        ),
    ] {
        let err = load(config).unwrap_err().to_string();
        assert!(err.contains(needle), "{config}: {err}");
        assert!(err.contains("config.toml"), "{config}: {err}");
    }
}

#[test]
fn servers_learn_where_oauth_tokens_are_kept() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[mcp_servers.remote]\nurl = \"https://example.invalid/mcp\"\n",
    )
    .unwrap();
    let cli = CliOverrides {
        cwd: Some("/tmp".into()),
        ..CliOverrides::default()
    };
    let settings = load_settings(home.path(), &cli).unwrap();
    assert_eq!(
        settings.mcp_servers["remote"].oauth_credentials_file,
        Some(home.path().join(".credentials.json"))
    );
}

#[test]
fn the_credentials_store_is_the_file_and_keyring_is_refused() {
    for value in ["file", "auto"] {
        load(&format!("mcp_oauth_credentials_store = \"{value}\"\n")).unwrap();
    }
    for (value, needle) in [
        ("keyring", "`keyring` is not supported by troupe"),
        ("vault", "unknown value `vault`"),
    ] {
        let err = load(&format!("mcp_oauth_credentials_store = \"{value}\"\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{value}: {err}");
        assert!(
            err.contains("mcp_oauth_credentials_store"),
            "{value}: {err}"
        );
    }
}
