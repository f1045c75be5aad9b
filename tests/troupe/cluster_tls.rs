//! The pool over TLS: a nats-server speaking only TLS with a certificate from a private CA
//! made at test time, `troupe worker` and `troupe exec --remote` given `tls://` URLs and
//! `[cluster] tls_ca_file` (plus a client certificate where the server verifies clients).

use crate::cluster_support::{append_cluster, wait_limited, Pool};
use std::time::Duration;
use troupe_mock_model::MockResponse;
use troupe_test_support::nats::{ClientCertificates, NatsServer};
use troupe_test_support::tls::TestPki;
use troupe_test_support::{stderr, stdout, Harness};

fn one_command_run() -> Vec<MockResponse> {
    vec![
        MockResponse::shell("c1", &["sh", "-c", "echo over-tls"]),
        MockResponse::text("done over tls"),
    ]
}

/// A pool on `nats` whose requester (and so every worker) has `[cluster] nats_url` =
/// the server's `tls://` URL and the `extra` lines.
fn tls_pool(nats: NatsServer, extra: &str) -> Pool {
    let h = Harness::new(one_command_run());
    append_cluster(h.home.path(), &nats.tls_url(), extra);
    Pool {
        nats,
        h,
        workers: Vec::new(),
    }
}

fn ca_line(pki: &TestPki) -> String {
    format!("tls_ca_file = \"{}\"", pki.ca_file().display())
}

fn client_lines(pki: &TestPki) -> String {
    format!(
        "tls_cert_file = \"{}\"\ntls_key_file = \"{}\"",
        pki.client_cert().display(),
        pki.client_key().display()
    )
}

/// `exec --remote` in the requester's home, killed (and the test failed) if it hangs.
fn exec_remote_limited(pool: &Pool) -> std::process::Output {
    let child = pool.remote_command(&["--json", "go"]).spawn().unwrap();
    wait_limited(child, Duration::from_secs(90))
}

fn assert_run_completed(pool: &Pool, out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}\nworker: {}",
        stderr(out),
        pool.workers[0].log()
    );
    let text = stdout(out);
    assert!(text.contains("over-tls"), "{text}");
    assert!(text.contains("done over tls"), "{text}");
    assert_eq!(pool.h.rollouts().len(), 1);
}

#[test]
fn a_remote_run_completes_over_tls_with_a_private_ca() {
    let pki = TestPki::generate();
    let nats = NatsServer::start_with_tls(&pki, ClientCertificates::NotAsked);
    // A server asking no credentials: joined only with the opt-in, warned about each time.
    let mut pool = tls_pool(
        nats,
        &format!(
            "{}\ntls_required = true\nallow_anonymous = true",
            ca_line(&pki)
        ),
    );
    pool.start_worker(1);
    let out = exec_remote_limited(&pool);
    assert_run_completed(&pool, &out);
    assert!(stderr(&out).contains("lets anyone in"), "{}", stderr(&out));
    assert!(pool.workers[0].log().contains("lets anyone in"));
}

#[test]
fn a_server_verifying_clients_takes_the_client_certificate() {
    let pki = TestPki::generate();
    let nats = NatsServer::start_with_tls(&pki, ClientCertificates::Required);
    let mut pool = tls_pool(nats, &format!("{}\n{}", ca_line(&pki), client_lines(&pki)));
    pool.start_worker(1);
    let out = exec_remote_limited(&pool);
    assert_run_completed(&pool, &out);
}

#[test]
fn without_the_ca_file_the_connection_fails_with_an_error_naming_the_url() {
    let pki = TestPki::generate();
    let nats = NatsServer::start_with_tls(&pki, ClientCertificates::NotAsked);
    let url = nats.tls_url();
    let pool = tls_pool(nats, "");
    let out = exec_remote_limited(&pool);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("TLS with the NATS server at {url} failed")),
        "{err}"
    );
    assert!(err.contains("tls_ca_file"), "{err}");
    assert!(pool.h.mock.requests().is_empty());
}

#[test]
fn a_server_verifying_clients_refuses_one_without_a_certificate() {
    let pki = TestPki::generate();
    let nats = NatsServer::start_with_tls(&pki, ClientCertificates::Required);
    let url = nats.tls_url();
    let pool = tls_pool(nats, &ca_line(&pki));
    let out = exec_remote_limited(&pool);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("TLS with the NATS server at {url} failed")),
        "{err}"
    );
    assert!(err.contains("tls_cert_file"), "{err}");
    assert!(pool.h.mock.requests().is_empty());
}

#[test]
fn an_unreadable_tls_file_or_a_lone_client_certificate_is_a_clear_error() {
    let pki = TestPki::generate();
    let nats = NatsServer::start_with_tls(&pki, ClientCertificates::NotAsked);
    let missing = pki.ca_file().with_file_name("no-such-ca.pem");
    let pool = tls_pool(
        nats,
        &format!(
            "tls_ca_file = \"{}\"\nallow_anonymous = true",
            missing.display()
        ),
    );
    let out = exec_remote_limited(&pool);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("cannot read tls_ca_file {}", missing.display())),
        "{err}"
    );

    let nats = NatsServer::start_with_tls(&pki, ClientCertificates::NotAsked);
    let lone = format!(
        "{}\ntls_cert_file = \"{}\"",
        ca_line(&pki),
        pki.client_cert().display()
    );
    let pool = tls_pool(nats, &lone);
    let out = exec_remote_limited(&pool);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("`tls_cert_file` and `tls_key_file` go together"),
        "{err}"
    );
}
