//! Remote sub-agents across a restart of the pool's NATS server: the root's stand-ins
//! follow their children by stream sequence through the reconnect, so every child reports
//! to `wait_agent` and every committed item reaches the parent's mirrors exactly once.

use crate::cluster_support::{
    first_line, rollout_items, wait_children_running, wait_limited, Pool,
};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use troupe_mock_model::multi_agent::{answers_seen, child_answer, child_name};
use troupe_mock_model::{AutoConfig, Behaviour, MockResponse};
use troupe_test_support::{stderr, stdout, Harness};

const AGENTS: usize = 4;

#[test]
fn remote_sub_agents_survive_a_nats_server_restart_mid_run_and_are_mirrored_once() {
    let config = AutoConfig {
        // Long enough to be running when the server goes down and comes back.
        command: "sleep 3; echo child-ran-here".to_owned(),
        answer: "all agents reported".to_owned(),
        ..AutoConfig::default()
    };
    let h = Harness::with_behaviour(
        Behaviour::MultiAgent {
            config,
            agents: AGENTS,
        },
        "",
    );
    let nats = crate::cluster_support::pool_nats("");
    crate::cluster_support::append_secure_cluster(
        h.home.path(),
        &nats.url(),
        "placement = \"remote\"",
    );
    let mut pool = Pool {
        nats,
        h,
        workers: Vec::new(),
    };
    // Two slots each: two children on each worker.
    for _ in 0..2 {
        pool.start_worker(2);
    }
    let child = pool
        .h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
            "investigate",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_children_running(&pool, AGENTS);
    // SIGKILL and start again on the same port and JetStream store.
    pool.nats.restart();
    let out = wait_limited(child, Duration::from_secs(180));
    let logs: Vec<String> = pool
        .workers
        .iter()
        .map(super::cluster_support::Worker::log)
        .collect();
    assert!(
        out.status.success(),
        "root: {}\nworkers: {logs:#?}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("all agents reported"),
        "{}",
        stdout(&out)
    );

    // The root's last request carried every child's final answer.
    let requests = pool.h.mock.requests();
    let last_root = requests
        .iter()
        .map(|r| &r.body)
        .rfind(|b| troupe_mock_model::multi_agent::child_task_path(b).is_none())
        .unwrap();
    assert_eq!(answers_seen(last_root, AGENTS), AGENTS);

    // Both workers ran children; nobody's lease lapsed (no takeover, no aborted call).
    let worker_rollouts: Vec<PathBuf> = pool
        .workers
        .iter()
        .flat_map(super::cluster_support::Worker::rollouts)
        .collect();
    assert_eq!(worker_rollouts.len(), AGENTS, "{worker_rollouts:?}");
    assert!(pool.workers.iter().all(|w| !w.rollouts().is_empty()));

    // Each child's mirror in the parent's home: byte for byte its worker's rollout, with
    // its task, its call, the call's output and its final answer exactly once.
    let local = pool.h.rollouts();
    assert_eq!(local.len(), AGENTS + 1, "{local:?}");
    let mut paths = Vec::new();
    for remote in &worker_rollouts {
        let mirror = local
            .iter()
            .find(|p| p.file_name() == remote.file_name())
            .unwrap_or_else(|| panic!("{} is not mirrored", remote.display()));
        assert_eq!(
            std::fs::read_to_string(mirror).unwrap(),
            std::fs::read_to_string(remote).unwrap()
        );
        let path = first_line(mirror)["agent"]["task_path"]
            .as_str()
            .unwrap()
            .to_string();
        let name = path.trim_start_matches("/root/").to_string();
        let items = rollout_items(mirror);
        let with = |needle: &str| items.iter().filter(|i| i.contains(needle)).count();
        assert_eq!(with(&format!("[You are agent `{path}`")), 1, "{items:#?}");
        assert_eq!(with("\"type\":\"function_call\""), 1, "{items:#?}");
        assert_eq!(with("\"type\":\"function_call_output\""), 1, "{items:#?}");
        let ran = items
            .iter()
            .filter(|i| {
                i.contains("\"type\":\"function_call_output\"") && i.contains("child-ran-here")
            })
            .count();
        assert_eq!(ran, 1, "{items:#?}");
        assert_eq!(with("aborted: worker lost"), 0, "{items:#?}");
        assert_eq!(with(&child_answer(&name)), 1, "{items:#?}");
        paths.push(path);
    }
    paths.sort();
    let mut expected: Vec<String> = (1..=AGENTS)
        .map(|k| format!("/root/{}", child_name(k)))
        .collect();
    expected.sort();
    assert_eq!(paths, expected);
}

/// Waits until `path` exists.
fn wait_file(path: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{what} did not happen");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_message_to_a_remote_agent_while_the_server_is_down_fails_clearly_and_is_never_delivered_late()
{
    use crate::subagents_support::{call, wait_call};
    use serde_json::json;
    let signals = tempfile::tempdir().unwrap();
    let ready = signals.path().join("ready");
    let go = signals.path().join("go");
    // The root's own command tells the test it runs, then holds the root until the test
    // has stopped the server: its next call (`send_message`) is made during the outage.
    let hold = format!(
        "touch {}; while [ ! -f {} ]; do sleep 0.05; done",
        ready.display(),
        go.display()
    );
    let root = vec![
        MockResponse::tool_calls(vec![call(
            "s1",
            "spawn_agent",
            json!({"task_name": "slow", "message": "slowmarker: run the long command",
                   "fork_turns": "none"}),
        )]),
        MockResponse::shell("h1", &["sh", "-c", &hold]),
        MockResponse::tool_calls(vec![call(
            "m1",
            "send_message",
            json!({"target": "slow", "message": "late-note: must not arrive after a failure"}),
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ];
    let h = Harness::new(root);
    h.mock.route(
        "slowmarker",
        vec![
            MockResponse::shell("c1", &["sh", "-c", "sleep 8; echo child-ran-here"]),
            MockResponse::text("slow child finished"),
        ],
    );
    let nats = crate::cluster_support::pool_nats("");
    crate::cluster_support::append_secure_cluster(
        h.home.path(),
        &nats.url(),
        "placement = \"remote\"",
    );
    let mut pool = Pool {
        nats,
        h,
        workers: Vec::new(),
    };
    pool.start_worker(1);
    let child = pool
        .h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
            "go",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_file(&ready, "the root's command");
    wait_children_running(&pool, 1);
    pool.nats.kill();
    std::fs::write(&go, "").unwrap();
    // The root has had the answer to its `send_message` once it asks the model again.
    let root_requests = |pool: &Pool| {
        pool.h
            .mock
            .requests()
            .into_iter()
            .filter(|r| troupe_mock_model::multi_agent::child_task_path(&r.body).is_none())
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while root_requests(&pool) < 4 {
        assert!(Instant::now() < deadline, "the root's send_message hangs");
        std::thread::sleep(Duration::from_millis(20));
    }
    pool.nats.restart();
    let out = wait_limited(child, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}\nworker: {}",
        stderr(&out),
        pool.workers[0].log()
    );
    let requests = pool.h.mock.requests();
    let root_last = requests
        .iter()
        .rfind(|r| troupe_mock_model::multi_agent::child_task_path(&r.body).is_none())
        .unwrap();
    let outputs = troupe_test_support::tool_outputs(&root_last.body);
    assert!(
        outputs[2].contains("/root/slow") && outputs[2].contains("did not take the request"),
        "{outputs:#?}"
    );
    assert!(outputs[3].contains("slow child finished"), "{outputs:#?}");
    // The message that failed never reached the child, not even after the reconnect.
    assert!(
        !requests
            .iter()
            .any(
                |r| troupe_mock_model::multi_agent::child_task_path(&r.body).is_some()
                    && r.body.to_string().contains("late-note")
            ),
        "a child's request carried the message whose sending failed"
    );
    let mirrored: Vec<PathBuf> = pool
        .h
        .rollouts()
        .into_iter()
        .filter(|p| !first_line(p)["agent"].is_null())
        .collect();
    assert_eq!(mirrored.len(), 1);
    let items = rollout_items(&mirrored[0]);
    let with = |needle: &str| items.iter().filter(|i| i.contains(needle)).count();
    assert_eq!(with("\"type\":\"function_call_output\""), 1, "{items:#?}");
    assert_eq!(with("slow child finished"), 1, "{items:#?}");
    assert_eq!(with("late-note"), 0, "{items:#?}");
}
