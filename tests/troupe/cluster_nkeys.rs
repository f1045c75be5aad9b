//! The pool with NKey authentication: the server knows only public keys; the worker and the
//! requester each sign the server's challenge with a seed of their own (`[cluster]
//! nkey_seed_file`), so no secret crosses the wire. A seed the server does not know is
//! refused before anything runs, with an error naming the server.

use crate::cluster_support::{
    append_cluster, make_pool_state, requester_permissions, wait_limited, Pool,
};
use std::path::{Path, PathBuf};
use std::time::Duration;
use troupe_messages::cluster::ClusterConfig;
use troupe_mock_model::MockResponse;
use troupe_test_support::nats::NatsServer;
use troupe_test_support::{stderr, stdout, Harness};

/// A fresh user key: its public key for the server, its seed in a 0600 file under `dir`.
fn user_key(dir: &Path, name: &str) -> (String, PathBuf) {
    let pair = nkeys::KeyPair::new_user();
    let path = dir.join(format!("{name}.nk"));
    std::fs::write(&path, pair.seed().unwrap()).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    (pair.public_key(), path)
}

fn seed_line(path: &Path) -> String {
    format!("nkey_seed_file = \"{}\"", path.display())
}

/// A server that admits the two public keys: the worker's with every right, the
/// requester's with a requester's.
fn nkey_server(worker: &str, requester: &str) -> NatsServer {
    NatsServer::start_with_config(&format!(
        "authorization {{\n  users = [\n    {{ nkey: {worker} }}\n    \
         {{ nkey: {requester}, permissions: {} }}\n  ]\n}}\n",
        requester_permissions(&[])
    ))
}

fn one_command_run() -> Vec<MockResponse> {
    vec![
        MockResponse::shell("c1", &["sh", "-c", "echo signed-in-with-nkeys"]),
        MockResponse::text("done with nkeys"),
    ]
}

#[test]
fn a_remote_run_completes_with_nkey_seeds_and_no_shared_secret() {
    let keys = tempfile::tempdir().unwrap();
    let (worker_pub, worker_seed) = user_key(keys.path(), "worker");
    let (requester_pub, requester_seed) = user_key(keys.path(), "requester");
    let nats = nkey_server(&worker_pub, &requester_pub);
    make_pool_state(
        &nats,
        &ClusterConfig {
            nkey_seed_file: Some(worker_seed.clone()),
            ..Default::default()
        },
    );
    let h = Harness::new(one_command_run());
    append_cluster(h.home.path(), &nats.url(), &seed_line(&requester_seed));
    let mut pool = Pool {
        nats,
        h,
        workers: Vec::new(),
    };
    pool.start_worker_as(
        1,
        "sandbox_mode = \"danger-full-access\"\n",
        (&seed_line(&requester_seed), &seed_line(&worker_seed)),
    );

    let child = pool.remote_command(&["--json", "go"]).spawn().unwrap();
    let out = wait_limited(child, Duration::from_secs(90));
    assert!(
        out.status.success(),
        "{}\nworker: {}",
        stderr(&out),
        pool.workers[0].log()
    );
    let text = stdout(&out);
    assert!(text.contains("signed-in-with-nkeys"), "{text}");
    assert!(text.contains("done with nkeys"), "{text}");
    // Neither side saw an anonymous server.
    assert!(!stderr(&out).contains("lets anyone in"), "{}", stderr(&out));
    assert!(!pool.workers[0].log().contains("lets anyone in"));
}

#[test]
fn a_seed_the_server_does_not_know_is_refused_before_anything_runs() {
    let keys = tempfile::tempdir().unwrap();
    let (worker_pub, _) = user_key(keys.path(), "worker");
    let (requester_pub, _) = user_key(keys.path(), "requester");
    let (_, stranger_seed) = user_key(keys.path(), "stranger");
    let nats = nkey_server(&worker_pub, &requester_pub);
    let url = nats.url();
    let h = Harness::new(one_command_run());
    append_cluster(h.home.path(), &url, &seed_line(&stranger_seed));
    let pool = Pool {
        nats,
        h,
        workers: Vec::new(),
    };
    let child = pool.remote_command(&["--json", "go"]).spawn().unwrap();
    let out = wait_limited(child, Duration::from_secs(60));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("the NATS server at {url} refused the credentials")),
        "{err}"
    );
    assert!(pool.h.mock.requests().is_empty());

    // A seed file that is not there is named, not a panic or a hang.
    let h = Harness::new(one_command_run());
    let missing = keys.path().join("missing.nk");
    append_cluster(h.home.path(), &url, &seed_line(&missing));
    let mut cmd = h.command();
    let out = cmd
        .args(["exec", "--remote", "--skip-git-repo-check", "go"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("nkey_seed_file"), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
}
