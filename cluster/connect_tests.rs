use super::*;

fn config() -> ClusterToml {
    ClusterToml {
        nats_url: Some("nats://127.0.0.1:4222".into()),
        ..ClusterToml::default()
    }
}

#[test]
fn defaults_and_the_url_flag_override() {
    let options = ClusterOptions::from_config(&config(), None).unwrap();
    assert_eq!(options.url, "nats://127.0.0.1:4222");
    assert_eq!(options.layout.pool(), "default");
    assert_eq!(options.lease_timeout, Duration::from_millis(5_000));
    assert_eq!(options.spawn_deadline, Duration::from_millis(30_000));
    let options = ClusterOptions::from_config(&config(), Some("nats://h:1")).unwrap();
    assert_eq!(options.url, "nats://h:1");
}

#[test]
fn no_url_two_credentials_half_a_password_or_a_zero_timeout_are_errors() {
    let err = ClusterOptions::from_config(&ClusterToml::default(), None).unwrap_err();
    assert!(err.to_string().contains("--nats"), "{err}");
    let mut two = config();
    two.user = Some("u".into());
    two.password = Some("p".into());
    two.creds_file = Some("/x.creds".into());
    let err = ClusterOptions::from_config(&two, None).unwrap_err();
    assert!(err.to_string().contains("one of"), "{err}");
    let mut half = config();
    half.user = Some("u".into());
    let err = ClusterOptions::from_config(&half, None).unwrap_err();
    assert!(err.to_string().contains("go together"), "{err}");
    let mut zero = config();
    zero.lease_timeout_ms = Some(0);
    let err = ClusterOptions::from_config(&zero, None).unwrap_err();
    assert!(err.to_string().contains("lease_timeout_ms"), "{err}");
}

#[test]
fn the_password_never_shows_in_debug_output_or_urls() {
    let mut with_password = config();
    with_password.user = Some("alice".into());
    with_password.password = Some("hunter2-secret".into());
    with_password.nats_url = Some("nats://bob:pw-in-url@h:4222".into());
    let options = ClusterOptions::from_config(&with_password, None).unwrap();
    let shown = format!("{options:?} {with_password:?}");
    assert!(!shown.contains("hunter2-secret"), "{shown}");
    assert!(!shown.contains("pw-in-url"), "{shown}");
    assert_eq!(
        redact_url("nats://bob:pw@h:4222"),
        "nats://<credentials>@h:4222"
    );
    assert_eq!(redact_url("nats://h:4222"), "nats://h:4222");
}
