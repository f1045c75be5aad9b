//! A worker SIGKILLed or SIGSTOPped mid-turn: its lease lapses, another worker takes the
//! thread over from the committed stream, the run completes, every committed item is in the
//! requester's mirrored rollout exactly once, and the stopped worker, once continued,
//! publishes nothing more for the thread.

use crate::cluster_support::{wait_limited, Pool};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::stderr;

fn script() -> Vec<MockResponse> {
    vec![
        // Long enough to be in flight when the worker goes, short enough to have ended by
        // the time a stopped worker is continued (it then has that end to publish).
        MockResponse::shell("c1", &["sh", "-c", "sleep 3; echo too-late"]),
        MockResponse::text("finished elsewhere"),
    ]
}

/// The worker (by index) whose home holds the thread's rollout.
fn worker_running_it(pool: &Pool) -> usize {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(i) = pool.workers.iter().position(|w| !w.rollouts().is_empty()) {
            return i;
        }
        assert!(Instant::now() < deadline, "no worker took the thread");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_first_request(pool: &Pool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while pool.h.mock.requests().is_empty() {
        assert!(Instant::now() < deadline, "the model was never asked");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The command is running on the worker; its call is committed.
    std::thread::sleep(Duration::from_millis(700));
}

/// The mirrored rollout's lines, parsed.
fn mirrored(pool: &Pool) -> Vec<serde_json::Value> {
    let rollouts = pool.h.rollouts();
    assert_eq!(rollouts.len(), 1, "{rollouts:?}");
    std::fs::read_to_string(&rollouts[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn count_items(lines: &[serde_json::Value], kind: &str, call_id: &str) -> usize {
    lines
        .iter()
        .filter(|l| {
            l["type"] == "response_item"
                && l["payload"]["type"] == kind
                && l["payload"]["call_id"] == call_id
        })
        .count()
}

fn check_completed_elsewhere(pool: &Pool, out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}\nworkers: {}",
        stderr(out),
        pool.workers
            .iter()
            .map(super::cluster_support::Worker::log)
            .collect::<Vec<_>>()
            .join("\n---\n")
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("finished elsewhere"), "{text}");
    let lines = mirrored(pool);
    assert_eq!(count_items(&lines, "function_call", "c1"), 1, "{lines:#?}");
    assert_eq!(
        count_items(&lines, "function_call_output", "c1"),
        1,
        "{lines:#?}"
    );
    let output = lines
        .iter()
        .find(|l| l["payload"]["type"] == "function_call_output")
        .unwrap();
    assert!(
        output.to_string().contains("aborted: worker lost"),
        "{output}"
    );
    // The lost turn ended (aborted) before the carried-on one started; the new one completed.
    let ends: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .filter_map(|l| l["payload"]["type"].as_str())
        .filter(|kind| matches!(*kind, "turn_started" | "turn_aborted" | "turn_complete"))
        .collect();
    assert_eq!(
        ends,
        [
            "turn_started",
            "turn_aborted",
            "turn_started",
            "turn_complete"
        ],
        "{lines:#?}"
    );
    let aborted = lines
        .iter()
        .find(|l| l["payload"]["type"] == "turn_aborted")
        .unwrap();
    assert_eq!(aborted["payload"]["reason"], "failed", "{aborted}");
    // The first prompt once; the session meta once.
    let prompts = lines
        .iter()
        .filter(|l| l.to_string().contains("start the long job"))
        .filter(|l| l["type"] == "response_item")
        .count();
    assert_eq!(prompts, 1, "{lines:#?}");
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "session_meta").count(),
        1
    );
    // The model saw the aborted call's output.
    let requests = pool.h.mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1]
        .body
        .to_string()
        .contains("aborted: worker lost"));
}

#[test]
fn a_killed_worker_s_thread_finishes_on_another() {
    let mut pool = Pool::new(script(), "lease_timeout_ms = 1000");
    pool.start_worker(1);
    pool.start_worker(1);
    let child = pool
        .remote_command(&["--json", "start the long job"])
        .spawn()
        .unwrap();
    wait_first_request(&pool);
    let victim = worker_running_it(&pool);
    pool.workers[victim].child.kill().unwrap();
    let killed_at = Instant::now();
    let out = wait_limited(child, Duration::from_secs(90));
    check_completed_elsewhere(&pool, &out);
    assert!(killed_at.elapsed() < Duration::from_secs(20));
    let survivor = 1 - victim;
    assert!(
        pool.workers[survivor].log().contains("took over thread"),
        "{}",
        pool.workers[survivor].log()
    );
}

#[test]
fn a_stopped_worker_loses_its_thread_and_once_continued_publishes_nothing_more() {
    let mut pool = Pool::new(script(), "lease_timeout_ms = 1000");
    pool.start_worker(1);
    pool.start_worker(1);
    let child = pool
        .remote_command(&["--json", "start the long job"])
        .spawn()
        .unwrap();
    wait_first_request(&pool);
    let victim = worker_running_it(&pool);
    let pid = pool.workers[victim].child.id() as i32;
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let stopped_at = Instant::now();
    let out = wait_limited(child, Duration::from_secs(90));
    check_completed_elsewhere(&pool, &out);
    let before = messages_in_threads_stream(&pool);
    // Its command has ended meanwhile: once continued, the worker has events to publish.
    while stopped_at.elapsed() < Duration::from_secs(4) {
        std::thread::sleep(Duration::from_millis(50));
    }
    unsafe { libc::kill(pid, libc::SIGCONT) };
    // Its heartbeat runs within a third of the lease timeout: give it several.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pool.workers[victim].log().contains("lost the lease") {
        assert!(Instant::now() < deadline, "{}", pool.workers[victim].log());
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(messages_in_threads_stream(&pool), before);
    assert_eq!(mirrored(&pool).len(), {
        let rollouts = pool.h.rollouts();
        std::fs::read_to_string(&rollouts[0])
            .unwrap()
            .lines()
            .count()
    });
}

/// How many messages the pool's threads stream holds (only this test's thread is in it).
fn messages_in_threads_stream(pool: &Pool) -> u64 {
    let url = pool.nats.url();
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let client = crate::cluster_support::connect_as_worker(&url).await;
            let js = async_nats::jetstream::new(client);
            let stream = js.get_stream("TROUPE_default_THREADS").await.unwrap();
            stream.get_info().await.unwrap().state.messages
        })
}
