use super::*;

fn config() -> ClusterToml {
    ClusterToml {
        nats_url: Some("tls://127.0.0.1:4222".into()),
        ..ClusterToml::default()
    }
}

#[test]
fn nothing_set_means_no_files_and_tls_only_when_the_url_or_server_asks() {
    let tls = TlsOptions::from_config(&config()).unwrap();
    assert_eq!(tls, TlsOptions::default());
    assert!(!tls.required());
    assert!(tls.apply(ConnectOptions::new()).is_ok());
    let mut required = config();
    required.tls_required = Some(true);
    assert!(TlsOptions::from_config(&required).unwrap().required());
}

#[test]
fn a_client_certificate_without_its_key_or_a_key_alone_is_a_config_error() {
    let mut cert_only = config();
    cert_only.tls_cert_file = Some("/etc/troupe/client.pem".into());
    let mut key_only = config();
    key_only.tls_key_file = Some("/etc/troupe/client-key.pem".into());
    for lone in [cert_only, key_only] {
        let err = TlsOptions::from_config(&lone).unwrap_err();
        assert!(matches!(err, ClusterError::Config(_)), "{err}");
        assert!(
            err.to_string()
                .contains("`tls_cert_file` and `tls_key_file` go together"),
            "{err}"
        );
    }
}

#[test]
fn an_unreadable_or_empty_file_is_an_error_naming_its_key_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing-ca.pem");
    let mut with_missing = config();
    with_missing.tls_ca_file = Some(missing.clone());
    let err = TlsOptions::from_config(&with_missing)
        .unwrap()
        .apply(ConnectOptions::new())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!("cannot read tls_ca_file {}", missing.display())),
        "{err}"
    );

    let not_pem = dir.path().join("notes.txt");
    std::fs::write(&not_pem, "not a certificate\n").unwrap();
    let mut with_text = config();
    with_text.tls_ca_file = Some(not_pem.clone());
    let err = TlsOptions::from_config(&with_text)
        .unwrap()
        .apply(ConnectOptions::new())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("tls_ca_file {}", not_pem.display()))
            && err.contains("no PEM certificate"),
        "{err}"
    );

    let mut with_bad_client = config();
    with_bad_client.tls_cert_file = Some(not_pem.clone());
    with_bad_client.tls_key_file = Some(not_pem);
    let err = TlsOptions::from_config(&with_bad_client)
        .unwrap()
        .apply(ConnectOptions::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("tls_cert_file"), "{err}");
}

#[test]
fn a_key_file_without_a_private_key_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("client-key.pem");
    std::fs::write(&key, "-----BEGIN NOTHING-----\n-----END NOTHING-----\n").unwrap();
    let err = check_private_key(&key).unwrap_err().to_string();
    assert!(
        err.contains(&format!("tls_key_file {}", key.display()))
            && err.contains("no PEM private key"),
        "{err}"
    );
}

#[test]
fn a_handshake_failure_under_an_io_error_is_told_apart_with_what_to_set() {
    use async_nats::rustls::{CertificateError, Error as RustlsError};
    use async_nats::{ConnectError, ConnectErrorKind};
    let untrusted = ConnectError::with_source(
        ConnectErrorKind::Io,
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            RustlsError::InvalidCertificate(CertificateError::UnknownIssuer),
        ),
    );
    let reason = handshake_failure(&untrusted).unwrap();
    assert!(
        reason.contains("UnknownIssuer") && reason.contains("tls_ca_file"),
        "{reason}"
    );
    let refused = ConnectError::with_source(
        ConnectErrorKind::Io,
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            RustlsError::AlertReceived(async_nats::rustls::AlertDescription::CertificateRequired),
        ),
    );
    let reason = handshake_failure(&refused).unwrap();
    assert!(reason.contains("tls_cert_file"), "{reason}");
    let closed = ConnectError::with_source(
        ConnectErrorKind::Io,
        std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
    );
    assert_eq!(handshake_failure(&closed), None);
}
