//! Who may use the pool: a server that lets anyone in is refused, a requester without
//! credentials gets nothing run, a worker runs only in its `worker_roots`, and a client of
//! the pool without a thread's secret can forge neither its worker's messages (events,
//! rollout lines, the end; nor replay them) nor its requester's ops.

use crate::cluster_support::{
    append_cluster, connect_as, connect_as_worker, rollout_items, wait_limited, Pool,
    INTRUDER_PASSWORD,
};
use futures::StreamExt;
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::nats::NatsServer;
use troupe_test_support::{stderr, stdout, Harness, KEY_VAR};

#[test]
fn an_anonymous_server_is_refused_and_a_requester_without_credentials_runs_nothing() {
    // The old first example of the docs: a server without credentials. The worker does not
    // join it, so what anyone with the URL asks runs nowhere.
    let open = NatsServer::start();
    let victim = Harness::new(vec![MockResponse::text("ran")]);
    append_cluster(
        victim.home.path(),
        &open.url(),
        &format!("worker_roots = [\"{}\"]", victim.workdir.path().display()),
    );
    let worker = victim
        .command()
        .args(["worker", "--slots", "1"])
        .env(KEY_VAR, "test-key")
        .output()
        .unwrap();
    assert!(!worker.status.success());
    assert!(
        stderr(&worker).contains("lets anyone in"),
        "{}",
        stderr(&worker)
    );
    let rogue = Harness::new(vec![]);
    append_cluster(rogue.home.path(), &open.url(), "spawn_deadline_ms = 2000");
    let out = rogue
        .command()
        .args(["exec", "--remote", "--skip-git-repo-check", "-C"])
        .arg(victim.workdir.path())
        .arg("touch pwned")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("lets anyone in"), "{}", stderr(&out));
    assert!(victim.mock.requests().is_empty());

    // An authenticated pool: a requester with the URL and no credentials is refused.
    let mut pool = Pool::new(vec![MockResponse::text("ran")], "");
    pool.start_worker(1);
    let rogue = Harness::new(vec![]);
    append_cluster(
        rogue.home.path(),
        &pool.nats.url(),
        "allow_anonymous = true",
    );
    let out = rogue
        .command()
        .args(["exec", "--remote", "--skip-git-repo-check", "-C"])
        .arg(pool.h.workdir.path())
        .arg("touch pwned")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("refused"), "{}", stderr(&out));
    assert!(pool.h.mock.requests().is_empty());
    assert!(!pool.h.workdir.path().join("pwned").exists());
}

#[test]
fn a_worker_refuses_a_directory_outside_its_worker_roots() {
    let mut pool = Pool::new(
        vec![MockResponse::shell("c1", &["sh", "-c", "touch pwned"])],
        "",
    );
    pool.start_worker(1);
    let private = tempfile::tempdir().unwrap();
    let cd = private.path().display().to_string();
    let out = pool.exec_remote(&["-C", &cd, "touch pwned"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("outside its [cluster] worker_roots"), "{err}");
    assert!(pool.h.mock.requests().is_empty());
    assert!(!private.path().join("pwned").exists());
    // A symlink inside the root that leads out of it is outside too.
    let link = pool.h.workdir.path().join("escape");
    std::os::unix::fs::symlink(private.path(), &link).unwrap();
    let out = pool.exec_remote(&["-C", &link.display().to_string(), "touch pwned"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("outside its [cluster] worker_roots"),
        "{}",
        stderr(&out)
    );
    assert!(pool.h.mock.requests().is_empty());
}

/// The running thread's id, from its lease (as anyone following the stream learns it).
fn running_thread(pool: &Pool) -> String {
    let url = pool.nats.url();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let keys: Vec<String> = tokio::runtime::Runtime::new().unwrap().block_on(async {
            let js = async_nats::jetstream::new(connect_as_worker(&url).await);
            let kv = js.get_key_value("TROUPE_default").await.unwrap();
            let mut keys = kv.keys().await.unwrap();
            let mut found = Vec::new();
            while let Some(Ok(key)) = keys.next().await {
                found.push(key);
            }
            found
        });
        if let Some(lease) = keys.iter().find_map(|k| k.strip_prefix("lease.")) {
            return lease.to_string();
        }
        assert!(Instant::now() < deadline, "no thread started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_without_the_thread_secret_cannot_forge_or_replay_its_messages_or_ops() {
    let mut pool = Pool::new(
        vec![
            MockResponse::shell("c1", &["sh", "-c", "sleep 3; echo real-output"]),
            MockResponse::text("the real answer"),
        ],
        "",
    );
    pool.start_worker(1);
    let child = pool.remote_command(&["--json", "go"]).spawn().unwrap();
    let thread = running_thread(&pool);
    // The worker's rollout is being written: its path is what a forger would name.
    let deadline = Instant::now() + Duration::from_secs(30);
    while pool.workers[0].rollouts().is_empty() || pool.h.mock.requests().is_empty() {
        assert!(Instant::now() < deadline, "the thread did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let worker_rollout = pool.workers[0].rollouts()[0].clone();
    let relative = worker_rollout
        .strip_prefix(pool.workers[0].home.path().join("cluster/threads"))
        .unwrap()
        .components()
        .skip(1)
        .collect::<std::path::PathBuf>()
        .display()
        .to_string();
    let url = pool.nats.url();
    let events = format!("troupe.default.thread.{thread}.events");
    let ops = format!("troupe.default.thread.{thread}.ops");
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let intruder = connect_as(&url, "intruder", INTRUDER_PASSWORD).await;
        let js = async_nats::jetstream::new(intruder.clone());
        let forged_line = serde_json::json!({
            "timestamp": "2026-12-04T00:00:00.000Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "FORGED-USER-WORDS"}]}
        })
        .to_string();
        let forged_event = serde_json::json!({
            "id": "", "msg": {"type": "warning", "message": "FORGED-EVENT"}
        })
        .to_string();
        let forged_end = serde_json::json!({"succeeded": true}).to_string();
        let sends = [
            ("rollout", forged_line.clone(), Some(relative.clone())),
            ("event", forged_event, None),
            ("end", forged_end, None),
        ];
        for (kind, payload, path) in sends {
            // Unsigned, and signed with a made-up signature naming the right predecessor.
            for signature in [None, Some("ab".repeat(32))] {
                let mut headers = async_nats::HeaderMap::new();
                headers.insert("Troupe-Kind", kind);
                if let Some(path) = &path {
                    headers.insert("Troupe-Rollout", path.as_str());
                }
                if let Some(signature) = &signature {
                    headers.insert("Troupe-Sig", signature.as_str());
                    headers.insert("Troupe-Prev", "1");
                }
                js.publish_with_headers(events.clone(), headers, payload.clone().into())
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        }
        // A replay: the worker's own first message, headers and all, published again (read
        // here with the test's own access; a follower of the stream sees it as well).
        let reader = async_nats::jetstream::new(connect_as_worker(&url).await);
        let stream = reader.get_stream("TROUPE_default_THREADS").await.unwrap();
        let first = stream
            .get_first_raw_message_by_subject(&events, 1)
            .await
            .unwrap();
        // Without the server's own headers (the expected sequence and id would refuse it).
        let mut headers = async_nats::HeaderMap::new();
        for (name, values) in first.headers.iter() {
            if name.to_string().starts_with("Troupe-") {
                for value in values {
                    headers.append(name.clone(), value.clone());
                }
            }
        }
        js.publish_with_headers(events.clone(), headers, first.payload.clone())
            .await
            .unwrap()
            .await
            .unwrap();
        // Ops: an interrupt and an approval decision, unsigned and with a made-up signature.
        for payload in [
            r#"{"type":"interrupt"}"#,
            r#"{"type":"approval","call_id":"c1","decision":"approved"}"#,
        ] {
            intruder.publish(ops.clone(), payload.into()).await.unwrap();
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Troupe-Nonce", format!("{}-00", now_ms()).as_str());
            headers.insert("Troupe-Sig", "cd".repeat(32).as_str());
            intruder
                .publish_with_headers(ops.clone(), headers, payload.into())
                .await
                .unwrap();
        }
        intruder.flush().await.unwrap();
    });
    let out = wait_limited(child, Duration::from_secs(90));
    let (text, err) = (stdout(&out), stderr(&out));
    // Not ended early by the forged end, not interrupted by the forged op: the real turn
    // ran to its end.
    assert!(
        out.status.success(),
        "{err}\nworker: {}",
        pool.workers[0].log()
    );
    assert!(text.contains("real-output"), "{text}");
    assert!(text.contains("the real answer"), "{text}");
    assert!(!text.contains("FORGED"), "{text}");
    assert!(
        err.contains("ignored a message not from the thread's worker"),
        "{err}"
    );
    // The mirror holds exactly the worker's lines: nothing forged, nothing replayed.
    let mirrored = pool.h.rollouts();
    assert_eq!(mirrored.len(), 1, "{mirrored:?}");
    let mirror_text = std::fs::read_to_string(&mirrored[0]).unwrap();
    assert!(!mirror_text.contains("FORGED"));
    assert_eq!(
        mirror_text,
        std::fs::read_to_string(&worker_rollout).unwrap()
    );
    assert_eq!(rollout_items(&mirrored[0]), rollout_items(&worker_rollout));
    let log = pool.workers[0].log();
    assert_eq!(log.matches("ignored a request on").count(), 4, "{log}");
}

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

#[test]
fn a_requester_can_neither_read_spawn_requests_nor_publish_as_a_worker() {
    let mut pool = Pool::new(vec![], "");
    pool.start_worker(1);
    let url = pool.nats.url();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let requester = connect_as(
            &url,
            "requester",
            crate::cluster_support::REQUESTER_PASSWORD,
        )
        .await;
        let js = async_nats::jetstream::new(requester);
        let stream = js.get_stream("TROUPE_default_SPAWN").await.unwrap();
        let consumer = stream
            .create_consumer(async_nats::jetstream::consumer::pull::Config::default())
            .await;
        assert!(consumer.is_err(), "a requester read the spawn queue");
        assert!(js.get_key_value("TROUPE_default_SECRETS").await.is_err());
        let published = js
            .publish("troupe.default.thread.x.events", "forged".into())
            .await;
        let acked = match published {
            Ok(ack) => ack.await.is_ok(),
            Err(_) => false,
        };
        assert!(!acked, "a requester published on a thread's subject");
    });
}
