//! `troupe exec --remote` end to end: a real nats-server on a loopback port, real
//! `troupe worker` processes, the mock model over loopback HTTP.

use crate::cluster_support::{append_cluster, normalized_json, rollout_items, wait_limited, Pool};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::nats::{free_port, NatsServer};
use troupe_test_support::{stderr, stdout, Harness};

fn two_runs_of_one_tool_loop() -> Vec<MockResponse> {
    let once = || {
        vec![
            MockResponse::shell("c1", &["sh", "-c", "echo remote-ok"]),
            MockResponse::text("all done"),
        ]
    };
    let mut script = once();
    script.extend(once());
    script
}

#[test]
fn remote_exec_prints_the_same_json_as_local_and_mirrors_the_rollout() {
    let mut pool = Pool::new(two_runs_of_one_tool_loop(), "");
    let local = pool.h.exec(&["--json", "run it"]);
    assert!(local.status.success(), "local: {}", stderr(&local));
    pool.start_worker(2);
    let remote = pool.exec_remote(&["--json", "run it"]);
    assert!(
        remote.status.success(),
        "remote: {}\nworker: {}",
        stderr(&remote),
        pool.workers[0].log()
    );
    assert_eq!(
        normalized_json(&stdout(&remote)),
        normalized_json(&stdout(&local))
    );
    assert!(stdout(&remote).contains("remote-ok"), "{}", stdout(&remote));

    // The mirror holds the worker's rollout lines exactly.
    let worker_rollouts = pool.workers[0].rollouts();
    assert_eq!(worker_rollouts.len(), 1, "{worker_rollouts:?}");
    let thread_id =
        serde_json::from_str::<serde_json::Value>(stdout(&remote).lines().next().unwrap()).unwrap()
            ["thread_id"]
            .as_str()
            .unwrap()
            .to_string();
    let mirrored: Vec<_> = pool
        .h
        .rollouts()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&thread_id))
        .collect();
    assert_eq!(mirrored.len(), 1, "{:?}", pool.h.rollouts());
    assert_eq!(
        std::fs::read_to_string(&mirrored[0]).unwrap(),
        std::fs::read_to_string(&worker_rollouts[0]).unwrap()
    );
    let items = rollout_items(&mirrored[0]);
    assert!(items.iter().any(|i| i.contains("remote-ok")), "{items:?}");

    // `troupe list` knows the remote thread.
    let list = pool.h.command().args(["list"]).output().unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(stdout(&list).contains(&thread_id[..8]), "{}", stdout(&list));
}

#[test]
fn remote_exec_human_output_ends_with_the_last_message() {
    let mut pool = Pool::new(
        vec![
            MockResponse::shell("c1", &["sh", "-c", "echo hi"]),
            MockResponse::text("remote answer"),
        ],
        "",
    );
    pool.start_worker(1);
    let out = pool.exec_remote(&["say hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "remote answer\n");
    // The prompt is in this machine's history, as after a local run.
    let history = std::fs::read_to_string(pool.h.home.path().join("history.jsonl")).unwrap();
    assert!(history.contains("say hi"), "{history}");
}

#[test]
fn an_unreachable_nats_server_is_a_clear_error() {
    let h = Harness::new(vec![]);
    let url = format!("nats://127.0.0.1:{}", free_port());
    crate::cluster_support::append_secure_cluster(h.home.path(), &url, "");
    let out = h
        .command()
        .args(["exec", "--remote", "--skip-git-repo-check", "hello"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("cannot reach the NATS server at {url}")),
        "{err}"
    );
    assert!(h.mock.requests().is_empty());
}

#[test]
fn a_spawn_request_no_worker_takes_fails_at_its_deadline_and_is_withdrawn() {
    let mut pool = Pool::new(
        vec![MockResponse::text("too late")],
        "spawn_deadline_ms = 1000",
    );
    let started = Instant::now();
    let out = pool.exec_remote(&["hello"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no worker took the spawn request within 1000 ms"),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // A worker that joins later does not run the withdrawn request.
    pool.start_worker(1);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        pool.h.mock.requests().is_empty(),
        "{}",
        pool.workers[0].log()
    );
}

#[test]
fn refused_credentials_are_a_clear_error_that_does_not_show_them() {
    let nats = NatsServer::start_with_auth("troupe", "right-password");
    let h = Harness::new(vec![]);
    append_cluster(
        h.home.path(),
        &nats.url(),
        "user = \"troupe\"\npassword = \"wrong-secret-pw\"",
    );
    let out = h
        .command()
        .args(["exec", "--remote", "--skip-git-repo-check", "hello"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("refused the credentials"), "{err}");
    assert!(!err.contains("wrong-secret-pw"), "{err}");
}

#[test]
fn flags_a_remote_thread_cannot_carry_are_refused_before_anything_starts() {
    let pool = Pool::new(vec![], "");
    let out = pool.exec_remote(&["-m", "other-model", "--ephemeral", "hello"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("--model") && err.contains("--ephemeral"),
        "{err}"
    );
}

/// Waits until the mock has served `n` requests.
fn wait_requests(pool: &Pool, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while pool.h.mock.requests().len() < n {
        assert!(
            Instant::now() < deadline,
            "the mock saw {} requests",
            pool.h.mock.requests().len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_interrupts_the_turn_on_the_worker() {
    let mut pool = Pool::new(
        vec![
            MockResponse::shell("c1", &["sh", "-c", "sleep 40; echo never"]),
            MockResponse::text("not reached"),
        ],
        "",
    );
    pool.start_worker(1);
    let child = pool.remote_command(&["--json", "wait"]).spawn().unwrap();
    wait_requests(&pool, 1);
    // The command is running on the worker.
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = wait_limited(child, Duration::from_secs(90));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(sent.elapsed() < Duration::from_secs(20));
    let lines = normalized_json(&stdout(&out));
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "turn.failed"
                && l["error"]["message"] == "the turn was interrupted"),
        "{lines:?}"
    );
    // The turn ended without asking the model again.
    assert_eq!(pool.h.mock.requests().len(), 1);
}

#[test]
fn a_nats_server_restart_mid_turn_loses_and_repeats_nothing() {
    let mut pool = Pool::new(
        vec![
            MockResponse::shell("c1", &["sh", "-c", "sleep 3; echo survived-restart"]),
            MockResponse::text("after the restart"),
        ],
        "",
    );
    pool.start_worker(1);
    let child = pool.remote_command(&["--json", "go"]).spawn().unwrap();
    wait_requests(&pool, 1);
    std::thread::sleep(Duration::from_millis(300));
    pool.nats.restart();
    let out = wait_limited(child, Duration::from_secs(90));
    assert!(
        out.status.success(),
        "{}\nworker: {}",
        stderr(&out),
        pool.workers[0].log()
    );
    let text = stdout(&out);
    assert!(text.contains("survived-restart"), "{text}");
    assert!(text.contains("after the restart"), "{text}");
    // Every event once: one thread start, one end of the command, one final message.
    assert_eq!(text.matches("\"thread.started\"").count(), 1, "{text}");
    assert_eq!(
        text.matches("\"aggregated_output\":\"survived-restart")
            .count(),
        1,
        "{text}"
    );
    let mirrored = pool.h.rollouts();
    assert_eq!(mirrored.len(), 1);
    let worker_rollouts = pool.workers[0].rollouts();
    assert_eq!(
        std::fs::read_to_string(&mirrored[0]).unwrap(),
        std::fs::read_to_string(&worker_rollouts[0]).unwrap()
    );
}

#[test]
fn messages_larger_than_the_server_accepts_go_in_parts_and_arrive_whole() {
    // 16 KiB messages at most; the command prints 300 KB (its event and rollout line, even
    // truncated for the model, are several times that).
    let nats = crate::cluster_support::pool_nats("max_payload: 16384\n");
    let mut pool = Pool::with_nats(
        nats,
        vec![
            MockResponse::shell("c1", &["sh", "-c", "printf '%0300000d' 0 | tr 0 x"]),
            MockResponse::text("big output seen"),
        ],
        "",
    );
    pool.start_worker(1);
    let child = pool
        .remote_command(&["--json", "print a lot"])
        .spawn()
        .unwrap();
    let out = wait_limited(child, Duration::from_secs(90));
    assert!(
        out.status.success(),
        "{}\nworker: {}",
        stderr(&out),
        pool.workers[0].log()
    );
    let text = stdout(&out);
    assert!(text.contains("big output seen"));
    // The rollout holds a line several times the server's limit: it came in parts, whole.
    let mirrored = pool.h.rollouts();
    let worker_rollouts = pool.workers[0].rollouts();
    let worker_text = std::fs::read_to_string(&worker_rollouts[0]).unwrap();
    let longest = worker_text.lines().map(str::len).max().unwrap();
    assert!(longest > 2 * 16_384, "{longest}");
    assert_eq!(std::fs::read_to_string(&mirrored[0]).unwrap(), worker_text);
}

#[test]
fn a_command_needing_approval_on_the_worker_is_denied_and_the_requester_says_so() {
    let mut pool = Pool::new(
        vec![
            MockResponse::shell("c1", &["sh", "-c", "echo needs-approval > made-by-remote"]),
            MockResponse::text("denied, fine"),
        ],
        "",
    );
    // This worker asks before anything leaves its read-only sandbox.
    pool.start_worker_with(
        1,
        "approval_policy = \"untrusted\"\nsandbox_mode = \"read-only\"\n",
    );
    let out = pool.exec_remote(&["write a file"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("needs approval, which nobody can give on a worker: denied"),
        "{err}"
    );
    assert!(!pool.h.workdir.path().join("made-by-remote").exists());
    assert_eq!(stdout(&out), "denied, fine\n");
}

#[test]
fn a_stream_deleted_under_a_running_thread_is_a_clear_error_not_a_hang() {
    let mut pool = Pool::new(
        vec![
            MockResponse::shell("c1", &["sh", "-c", "sleep 2; echo gone"]),
            MockResponse::text("not shown"),
        ],
        "",
    );
    pool.start_worker(1);
    let child = pool.remote_command(&["--json", "go"]).spawn().unwrap();
    wait_requests(&pool, 1);
    let url = pool.nats.url();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let js =
                async_nats::jetstream::new(crate::cluster_support::connect_as_worker(&url).await);
            js.delete_stream("TROUPE_default_THREADS").await.unwrap();
        });
    let out = wait_limited(child, Duration::from_secs(60));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("TROUPE_default_THREADS was deleted under the running thread"),
        "{err}"
    );
}

#[test]
fn a_remote_thread_resumes_locally_from_its_mirror() {
    let mut pool = Pool::new(
        vec![
            MockResponse::text("first answer, remote"),
            MockResponse::text("second answer, local"),
        ],
        "",
    );
    pool.start_worker(1);
    let remote = pool.exec_remote(&["--json", "first question"]);
    assert!(remote.status.success(), "{}", stderr(&remote));
    let first = stdout(&remote);
    let started: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let thread_id = started["thread_id"].as_str().unwrap().to_string();
    let resumed = pool.h.exec(&["resume", &thread_id, "second question"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed), "second answer, local\n");
    // The local request carried the remote turn.
    let requests = pool.h.mock.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("first question"), "{last}");
    assert!(last.contains("first answer, remote"), "{last}");
}
