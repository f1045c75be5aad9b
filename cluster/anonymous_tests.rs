use super::*;

#[test]
fn host_port_takes_the_first_server_without_credentials() {
    assert_eq!(
        host_port("nats://u:p@127.0.0.1:4333,nats://other:1").as_deref(),
        Some("127.0.0.1:4333")
    );
    assert_eq!(
        host_port("tls://nats.internal").as_deref(),
        Some("nats.internal:4222")
    );
    assert_eq!(
        host_port("nats://[::1]:5000").as_deref(),
        Some("[::1]:5000")
    );
    assert_eq!(host_port("nats://[::1]").as_deref(), Some("[::1]:4222"));
}

#[test]
fn only_a_tls_verify_true_info_requires_certificates() {
    assert!(info_requires_certificates(
        "INFO {\"tls_required\":true,\"tls_verify\":true}\r\n"
    ));
    assert!(!info_requires_certificates(
        "INFO {\"tls_required\":true}\r\n"
    ));
    assert!(!info_requires_certificates("-ERR 'tls_verify':true\r\n"));
}
