//! Remote sub-agents across a restart of the pool's NATS server: the root's stand-ins
//! follow their children by stream sequence through the reconnect, so every child reports
//! to `wait_agent` and every committed item reaches the parent's mirrors exactly once.

use crate::cluster_support::{
    append_cluster, first_line, rollout_items, wait_children_running, wait_limited, Pool,
};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use troupe_mock_model::multi_agent::{answers_seen, child_answer, child_name};
use troupe_mock_model::{AutoConfig, Behaviour};
use troupe_test_support::nats::NatsServer;
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
    let nats = NatsServer::start();
    append_cluster(h.home.path(), &nats.url(), "placement = \"remote\"");
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
    let logs: Vec<String> = pool.workers.iter().map(|w| w.log()).collect();
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
        .filter(|b| troupe_mock_model::multi_agent::child_task_path(b).is_none())
        .last()
        .unwrap();
    assert_eq!(answers_seen(last_root, AGENTS), AGENTS);

    // Both workers ran children; nobody's lease lapsed (no takeover, no aborted call).
    let worker_rollouts: Vec<PathBuf> = pool.workers.iter().flat_map(|w| w.rollouts()).collect();
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
