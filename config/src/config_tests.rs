//! Config loading: overrides, provider resolution, and error messages that name the spot.

use crate::error::ConfigError;
use crate::overrides::{apply_override, parse_override};
use crate::resolve::{load_settings, CliOverrides};
use pretty_assertions::assert_eq;
use toml::{Table, Value};
use troupe_messages::policy::SandboxMode;
use troupe_messages::settings::WireApi;

fn home_with(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    dir
}

#[test]
fn override_values_parse_as_toml_or_fall_back_to_string() {
    let ov = parse_override("model_providers.mock.base_url=\"http://127.0.0.1:9/v1\"").unwrap();
    assert_eq!(ov.path, vec!["model_providers", "mock", "base_url"]);
    assert_eq!(ov.value, Value::String("http://127.0.0.1:9/v1".into()));
    assert_eq!(
        parse_override("a=http://x/y").unwrap().value,
        Value::String("http://x/y".into())
    );
    assert_eq!(parse_override("n=3").unwrap().value, Value::Integer(3));
    assert_eq!(
        parse_override("flag=true").unwrap().value,
        Value::Boolean(true)
    );
    assert!(matches!(
        parse_override("novalue"),
        Err(ConfigError::InvalidOverride { .. })
    ));
    assert!(matches!(
        parse_override("a..b=1"),
        Err(ConfigError::InvalidOverride { .. })
    ));
}

#[test]
fn override_through_a_non_table_is_rejected() {
    let mut table = Table::new();
    table.insert("model".into(), Value::String("x".into()));
    let err = apply_override(&mut table, &parse_override("model.sub=1").unwrap()).unwrap_err();
    assert!(err.to_string().contains("`model` is not a table"), "{err}");
}

#[test]
fn file_then_overrides_then_flags() {
    let home = home_with(
        r#"
model = "file-model"
model_provider = "mock"
sandbox_mode = "workspace-write"
[model_providers.mock]
base_url = "http://127.0.0.1:1/v1/"
env_key = "MOCK_KEY"
request_max_retries = 2
"#,
    );
    let cli = CliOverrides {
        raw: vec!["model_providers.mock.stream_max_retries=1".into()],
        sandbox_mode: Some(SandboxMode::DangerFullAccess),
        cwd: Some("/tmp".into()),
        ..CliOverrides::default()
    };
    let settings = load_settings(home.path(), &cli).unwrap();
    assert_eq!(settings.model, "file-model");
    assert_eq!(settings.provider.id, "mock");
    assert_eq!(settings.provider.base_url, "http://127.0.0.1:1/v1");
    assert_eq!(settings.provider.env_key.as_deref(), Some("MOCK_KEY"));
    assert_eq!(settings.provider.request_max_retries, 2);
    assert_eq!(settings.provider.stream_max_retries, 1);
    assert_eq!(settings.sandbox_mode, SandboxMode::DangerFullAccess);
}

#[test]
fn type_error_in_file_names_line() {
    let home = home_with("model = \"m\"\n\n[model_providers.mock]\nrequest_max_retries = \"x\"\n");
    let err = load_settings(home.path(), &CliOverrides::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(
            "config.toml:4: key `model_providers.mock.request_max_retries`: invalid type"
        ),
        "{text}"
    );
}

#[test]
fn type_error_in_override_names_key() {
    let home = tempfile::tempdir().unwrap();
    let cli = CliOverrides {
        raw: vec!["model_providers.mock.request_max_retries=many".into()],
        ..CliOverrides::default()
    };
    let err = load_settings(home.path(), &cli).unwrap_err();
    assert!(
        err.to_string()
            .contains("model_providers.mock.request_max_retries"),
        "{err}"
    );
}

#[test]
fn unknown_provider_lists_known_ones() {
    let home =
        home_with("model_provider = \"nope\"\n[model_providers.mock]\nbase_url = \"http://x\"\n");
    let err = load_settings(home.path(), &CliOverrides::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model provider `nope` is not defined; known providers: llamacpp, lmstudio, mock, ollama, openai, oss, vllm"
    );
}

#[test]
fn sandbox_and_granular_approval_keys() {
    use troupe_messages::policy::{AskForApproval, GranularApprovalConfig, SandboxBackendKind};
    let home = home_with(
        "approval_policy = { granular = { sandbox_approval = false } }\n\
         sandbox_mode = \"workspace-write\"\nsandbox_deny_read = [\"/secret\"]\n\
         sandbox_backend = \"landlock\"\n\
         [sandbox_workspace_write]\nwritable_roots = [\"/data\"]\nnetwork_access = true\n",
    );
    let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
    assert_eq!(
        settings.approval_policy,
        AskForApproval::Granular(GranularApprovalConfig {
            sandbox_approval: false,
            rules: true,
            patch_approval: true,
        })
    );
    assert_eq!(settings.sandbox_mode, SandboxMode::WorkspaceWrite);
    assert_eq!(
        settings.sandbox.writable_roots,
        vec![std::path::PathBuf::from("/data")]
    );
    assert!(settings.sandbox.network_access);
    assert_eq!(
        settings.sandbox.deny_read,
        vec![std::path::PathBuf::from("/secret")]
    );
    assert_eq!(settings.sandbox.backend, SandboxBackendKind::Landlock);
    let bad = home_with("[sandbox_workspace_write]\nwritable_root = [\"/x\"]\n");
    let err = load_settings(bad.path(), &CliOverrides::default()).unwrap_err();
    assert!(err.to_string().contains("writable_root"), "{err}");
}

#[test]
fn rollout_fsync_defaults_to_tool_results_and_can_be_set() {
    use troupe_messages::settings::FsyncPolicy;
    let cli = CliOverrides {
        cwd: Some("/tmp".into()),
        ..CliOverrides::default()
    };
    let home = home_with("");
    let settings = load_settings(home.path(), &cli).unwrap();
    assert_eq!(settings.rollout_fsync, FsyncPolicy::ToolResults);
    let home = home_with("rollout_fsync = \"every_item\"\n");
    let settings = load_settings(home.path(), &cli).unwrap();
    assert_eq!(settings.rollout_fsync, FsyncPolicy::EveryItem);
    let home = home_with("rollout_fsync = \"sometimes\"\n");
    let err = load_settings(home.path(), &cli).unwrap_err().to_string();
    assert!(
        err.contains("rollout_fsync") || err.contains("sometimes"),
        "{err}"
    );
}

#[test]
fn an_unknown_shell_environment_inherit_value_is_an_error_naming_file_line_and_key() {
    let home = home_with("model = \"m\"\n\n[shell_environment_policy]\ninherit = \"bogus\"\n");
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("config.toml:4"), "{err}");
    assert!(err.contains("shell_environment_policy.inherit"), "{err}");
    assert!(err.contains("bogus") && err.contains("`core`"), "{err}");
    let home = home_with("[shell_environment_policy]\ninherit = \"core\"\n");
    let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
    assert_eq!(
        settings.context.shell_env.inherit,
        troupe_messages::settings::ShellEnvInherit::Core
    );
}

#[test]
fn unknown_wire_api_is_an_error_naming_file_line_and_accepted_values() {
    let home = home_with(
        "model_provider = \"local\"\n\n[model_providers.local]\nbase_url = \"http://x\"\nwire_api = \"grpc\"\n",
    );
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("config.toml:5: key `model_providers.local.wire_api`"),
        "{err}"
    );
    assert!(
        err.contains("`grpc`") && err.contains("`responses`, `chat`, `anthropic`"),
        "{err}"
    );
    let home = tempfile::tempdir().unwrap();
    let cli = CliOverrides {
        raw: vec!["model_providers.openai.wire_api=\"soap\"".into()],
        ..CliOverrides::default()
    };
    let err = load_settings(home.path(), &cli).unwrap_err().to_string();
    assert!(
        err.contains("wire_api") && err.contains("`responses`, `chat`, `anthropic`"),
        "{err}"
    );
}

#[test]
fn every_spoken_wire_api_is_accepted() {
    for (value, wire) in [
        ("responses", WireApi::Responses),
        ("chat", WireApi::Chat),
        ("anthropic", WireApi::Anthropic),
    ] {
        let home = home_with(&format!(
            "model_provider = \"local\"\n[model_providers.local]\nbase_url = \"http://x\"\nwire_api = \"{value}\"\n"
        ));
        let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
        assert_eq!(settings.provider.wire_api, wire);
    }
}

#[test]
fn a_fifo_in_place_of_config_toml_is_an_error_not_a_hang() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.toml");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("config.toml") && err.contains("FIFO"), "{err}");
}

#[test]
fn supports_websockets_is_read_and_only_for_the_responses_wire() {
    let home = home_with(
        "model_provider = \"local\"\n[model_providers.local]\nbase_url = \"http://x\"\nsupports_websockets = true\n",
    );
    let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
    assert!(settings.provider.supports_websockets);
    let home = home_with(
        "model_provider = \"local\"\n[model_providers.local]\nbase_url = \"http://x\"\nwire_api = \"chat\"\nsupports_websockets = true\n",
    );
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("model_providers.local.supports_websockets")
            && err.contains("only the `responses` wire_api"),
        "{err}"
    );
}

#[test]
fn local_providers_are_built_in_chat_without_a_key() {
    let cli = CliOverrides {
        raw: vec!["model_provider=\"vllm\"".into()],
        ..CliOverrides::default()
    };
    let home = tempfile::tempdir().unwrap();
    let settings = load_settings(home.path(), &cli).unwrap();
    assert_eq!(settings.provider.wire_api, WireApi::Chat);
    assert_eq!(settings.provider.env_key, None);
    assert!(
        settings.provider.base_url.ends_with("/v1"),
        "{}",
        settings.provider.base_url
    );
}

#[test]
fn an_unusable_base_url_is_a_config_error_naming_the_key() {
    for bad in [
        "not a url",
        "ftp://example.com/v1",
        "http://",
        "localhost:8080/v1",
    ] {
        let home = home_with(&format!(
            "model_provider = \"mock\"\n[model_providers.mock]\nbase_url = \"{bad}\"\n"
        ));
        let err = load_settings(home.path(), &CliOverrides::default()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("model_providers.mock.base_url") && text.contains(bad),
            "{bad}: {text}"
        );
    }
    let home = home_with(
        "model_provider = \"mock\"\n[model_providers.mock]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    );
    assert!(load_settings(home.path(), &CliOverrides::default()).is_ok());
}

#[test]
fn cluster_keys_load_and_a_misspelt_one_is_an_error() {
    let home = home_with(
        "[cluster]\nnats_url = \"nats://127.0.0.1:4222\"\npool = \"farm\"\nlease_timeout_ms = 2000\n",
    );
    let loaded = crate::resolve::load_config(home.path(), &CliOverrides::default()).unwrap();
    assert_eq!(
        loaded.cluster.nats_url.as_deref(),
        Some("nats://127.0.0.1:4222")
    );
    assert_eq!(loaded.cluster.pool.as_deref(), Some("farm"));
    assert_eq!(loaded.cluster.lease_timeout_ms, Some(2000));
    let home = home_with("[cluster]\nnats_url = \"nats://h:1\"\nplacement = \"auto\"\n");
    let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
    // The thread's settings carry the pool to `spawn_agent`, but never into a rollout.
    assert_eq!(
        settings.cluster.placement,
        Some(crate::cluster::Placement::Auto)
    );
    assert!(!serde_json::to_string(&settings)
        .unwrap()
        .contains("nats://h:1"));
    let home = home_with("[cluster]\nplacement = \"cloud\"\n");
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("placement"), "{err}");
    let home = home_with("[cluster]\nnats_ulr = \"nats://x\"\n");
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("nats_ulr"), "{err}");
}

#[test]
fn cluster_workspace_defaults_to_shared_and_git_takes_a_remote() {
    use crate::cluster::{GitRemote, Workspace};
    let home = home_with("[cluster]\nnats_url = \"nats://h:1\"\n");
    let loaded = crate::resolve::load_config(home.path(), &CliOverrides::default()).unwrap();
    assert_eq!(loaded.cluster.workspace, None);
    assert_eq!(
        loaded.cluster.workspace.unwrap_or_default(),
        Workspace::Shared
    );
    assert_eq!(
        loaded.cluster.git_remote.unwrap_or_default().as_str(),
        "origin"
    );
    let home = home_with(
        "[cluster]\nnats_url = \"nats://h:1\"\nworkspace = \"git\"\ngit_remote = \"file:///srv/repo.git\"\n",
    );
    let loaded = crate::resolve::load_config(home.path(), &CliOverrides::default()).unwrap();
    assert_eq!(loaded.cluster.workspace, Some(Workspace::Git));
    assert_eq!(
        loaded.cluster.git_remote.as_ref().map(GitRemote::as_str),
        Some("file:///srv/repo.git")
    );
}

#[test]
fn cluster_workspace_and_git_remote_refuse_bad_values() {
    for (line, key) in [
        ("workspace = \"nfs\"", "workspace"),
        ("workspace = \"\"", "workspace"),
        ("git_remote = \"\"", "git_remote"),
        ("git_remote = \"  \"", "git_remote"),
        ("git_remote = \"--upload-pack=touch x\"", "git_remote"),
    ] {
        let home = home_with(&format!("[cluster]\n{line}\n"));
        let err = load_settings(home.path(), &CliOverrides::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(key), "{line}: {err}");
    }
}

#[test]
fn cluster_tls_keys_load_and_a_misspelt_or_mistyped_one_is_an_error() {
    let home = home_with(
        "[cluster]\nnats_url = \"tls://nats.internal:4222\"\ntls_ca_file = \"/etc/troupe/ca.pem\"\n\
         tls_cert_file = \"/etc/troupe/client.pem\"\ntls_key_file = \"/etc/troupe/client-key.pem\"\n\
         tls_required = true\n",
    );
    let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
    let cluster = &settings.cluster;
    assert_eq!(
        cluster.tls_ca_file.as_deref(),
        Some(std::path::Path::new("/etc/troupe/ca.pem"))
    );
    assert_eq!(
        cluster.tls_cert_file.as_deref(),
        Some(std::path::Path::new("/etc/troupe/client.pem"))
    );
    assert_eq!(
        cluster.tls_key_file.as_deref(),
        Some(std::path::Path::new("/etc/troupe/client-key.pem"))
    );
    assert_eq!(cluster.tls_required, Some(true));
    let home = home_with("[cluster]\ntls_ca = \"/etc/troupe/ca.pem\"\n");
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("tls_ca"), "{err}");
    let home = home_with("[cluster]\ntls_required = \"yes\"\n");
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("tls_required"), "{err}");
}

#[test]
fn the_checkpoints_table_is_read_over_its_defaults_and_rejects_unknown_keys() {
    use troupe_messages::settings::CheckpointSettings;
    let home = home_with("");
    let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
    assert_eq!(settings.checkpoints, CheckpointSettings::default());
    let home = home_with(
        "[checkpoints]\nenabled = false\nmax_age_days = 3\nmax_total_mb = 10\nmax_dir_mb = 1\n",
    );
    let settings = load_settings(home.path(), &CliOverrides::default()).unwrap();
    assert_eq!(
        settings.checkpoints,
        CheckpointSettings {
            enabled: false,
            max_age_days: 3,
            max_total_mb: 10,
            max_dir_mb: 1,
        }
    );
    let home = home_with("[checkpoints]\nmax_dir = 1\n");
    let err = load_settings(home.path(), &CliOverrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("max_dir"), "{err}");
}
