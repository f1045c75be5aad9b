//! Sub-agents placed on workers of the pool (`spawn_agent {placement: "remote"}`): a real
//! nats-server on a loopback port, three `troupe worker` processes, the mock model's
//! multi-agent scenario over loopback HTTP, and the real `troupe exec` as the root.

use crate::cluster_support::{
    first_line, rollout_items, wait_children_running, wait_limited, Pool,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use troupe_mock_model::multi_agent::{answers_seen, child_answer, child_name};
use troupe_mock_model::{AutoConfig, Behaviour, MockResponse};
use troupe_test_support::{stderr, stdout, Harness};

const AGENTS: usize = 12;

/// A pool whose requester's config places sub-agents remotely by default, with the root
/// a multi-agent scenario of `AGENTS` children that each run one command.
fn remote_agents_pool() -> Pool {
    let config = AutoConfig {
        command: "echo child-ran-here".to_owned(),
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
    Pool {
        nats,
        h,
        workers: Vec::new(),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn twelve_remote_sub_agents_on_three_workers_all_report_and_are_mirrored_once() {
    let mut pool = remote_agents_pool();
    for _ in 0..3 {
        pool.start_worker(4);
    }
    let child = pool
        .h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
            "--json",
            "investigate",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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

    // The root's last request carried all twelve final answers (its wait_agent results
    // and the notifications in its history).
    let requests = pool.h.mock.requests();
    let root_requests: Vec<&Value> = requests
        .iter()
        .map(|r| &r.body)
        .filter(|b| troupe_mock_model::multi_agent::child_task_path(b).is_none())
        .collect();
    let last = root_requests.last().unwrap();
    assert_eq!(answers_seen(last, AGENTS), AGENTS);
    // With a pool, `spawn_agent` offers `placement`, defaulting to the config's.
    let spawn_spec = root_requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "spawn_agent")
        .unwrap()
        .clone();
    let placement = &spawn_spec["parameters"]["properties"]["placement"];
    assert!(
        placement["description"]
            .as_str()
            .unwrap()
            .contains("Default `remote`"),
        "{placement}"
    );

    // Every child ran on a worker (none here): twelve rollouts across the three workers,
    // and the requester's home holds the root's and a mirror of each.
    let worker_rollouts: Vec<PathBuf> = pool
        .workers
        .iter()
        .flat_map(super::cluster_support::Worker::rollouts)
        .collect();
    assert_eq!(worker_rollouts.len(), AGENTS, "{worker_rollouts:?}");
    let local = pool.h.rollouts();
    assert_eq!(local.len(), AGENTS + 1, "{local:?}");
    let root = local
        .iter()
        .find(|p| first_line(p)["agent"].is_null())
        .unwrap();
    let root_id = first_line(root)["thread_id"].as_str().unwrap().to_string();
    let mut paths = Vec::new();
    for remote in &worker_rollouts {
        let mirror = local
            .iter()
            .find(|p| file_name(p) == file_name(remote))
            .unwrap_or_else(|| panic!("{} is not mirrored", remote.display()));
        // Byte for byte: every committed item of the child once, in order.
        assert_eq!(
            std::fs::read_to_string(mirror).unwrap(),
            std::fs::read_to_string(remote).unwrap()
        );
        let meta = first_line(mirror);
        assert_eq!(meta["parent_thread_id"].as_str(), Some(root_id.as_str()));
        let path = meta["agent"]["task_path"].as_str().unwrap().to_string();
        let name = path.trim_start_matches("/root/").to_string();
        let text = std::fs::read_to_string(mirror).unwrap();
        let items = rollout_items(mirror);
        let with = |needle: &str| items.iter().filter(|i| i.contains(needle)).count();
        assert_eq!(with(&child_answer(&name)), 1, "{path}: {items:#?}");
        assert_eq!(
            with("\"type\":\"function_call_output\""),
            1,
            "{path}: {items:#?}"
        );
        assert!(text.contains("child-ran-here"), "{path}: {text}");
        paths.push(path);
    }
    paths.sort();
    let mut expected: Vec<String> = (1..=AGENTS)
        .map(|k| format!("/root/{}", child_name(k)))
        .collect();
    expected.sort();
    assert_eq!(paths, expected);

    // `troupe list --tree`: the root with its twelve remote children under it.
    let list = pool.h.command().args(["list", "--tree"]).output().unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    assert_eq!(text.lines().count(), AGENTS + 1, "{text}");
    assert!(text.lines().next().unwrap().starts_with(&root_id), "{text}");
    for k in 1..=AGENTS {
        assert!(
            text.contains(&format!("└ /root/{} (", child_name(k))),
            "{text}"
        );
    }
}

#[test]
fn without_a_pool_placement_is_not_offered_and_remote_is_a_tool_error() {
    let spawn = crate::subagents_support::call(
        "s1",
        "spawn_agent",
        serde_json::json!({"task_name": "far", "message": "go", "placement": "remote"}),
    );
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn]),
        MockResponse::text("could not place it"),
    ]);
    let out = h.exec(&["--json", "investigate"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = h.mock.requests();
    // The tool schema is Codex's own: no `placement` without `[cluster] nats_url`.
    let spawn_spec = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "spawn_agent")
        .unwrap()
        .clone();
    assert!(spawn_spec["parameters"]["properties"]["placement"].is_null());
    let outputs = troupe_test_support::tool_outputs(&requests[1].body).join("\n");
    assert!(
        outputs.contains("no worker pool is configured") && outputs.contains("nats_url"),
        "{outputs}"
    );
    // Nothing was started.
    assert_eq!(h.rollouts().len(), 1);
}

/// The worker (by index) whose home holds rollouts of running children, other than `not`.
fn worker_with_children(pool: &Pool, not: Option<usize>) -> usize {
    (0..pool.workers.len())
        .find(|i| Some(*i) != not && !pool.workers[*i].rollouts().is_empty())
        .expect("a worker runs children")
}

#[test]
fn remote_sub_agents_of_a_killed_and_a_stopped_worker_finish_on_the_survivor() {
    let config = AutoConfig {
        // Long enough to be in flight when the workers go.
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
        "placement = \"remote\"\nlease_timeout_ms = 1000",
    );
    let mut pool = Pool {
        nats,
        h,
        workers: Vec::new(),
    };
    for _ in 0..3 {
        pool.start_worker(4);
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
    let killed = worker_with_children(&pool, None);
    pool.workers[killed].child.kill().unwrap();
    let stopped = worker_with_children(&pool, Some(killed));
    let stopped_pid = pool.workers[stopped].child.id() as i32;
    unsafe { libc::kill(stopped_pid, libc::SIGSTOP) };
    let stopped_at = std::time::Instant::now();
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
    let survivor = (0..3).find(|i| *i != killed && *i != stopped).unwrap();
    assert!(
        pool.workers[survivor].log().contains("took over thread"),
        "{}",
        pool.workers[survivor].log()
    );

    // Every child's committed items are in the mirrors exactly once: its task, its one
    // command call and that call's one output (the command's, or "aborted: worker lost"
    // for a child whose worker went), and its final answer.
    let local = pool.h.rollouts();
    assert_eq!(local.len(), AGENTS + 1, "{local:?}");
    let mut lost = 0;
    for mirror in local.iter().filter(|p| !first_line(p)["agent"].is_null()) {
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
        assert_eq!(with(&child_answer(&name)), 1, "{items:#?}");
        lost += with("aborted: worker lost");
    }
    // The eight children of the two lost workers were taken over mid-command.
    assert_eq!(lost, 8);

    // The stopped worker, once continued, finds its leases gone and writes nothing more.
    let before = messages_in_threads_stream(&pool);
    while stopped_at.elapsed() < Duration::from_secs(4) {
        std::thread::sleep(Duration::from_millis(50));
    }
    unsafe { libc::kill(stopped_pid, libc::SIGCONT) };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !pool.workers[stopped].log().contains("lost the lease") {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            pool.workers[stopped].log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(messages_in_threads_stream(&pool), before);
}

/// How many messages the pool's threads stream holds.
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

#[test]
fn messages_and_interrupts_reach_a_remote_agent_over_its_ops_subject() {
    use crate::subagents_support::{call, wait_call};
    use serde_json::json;
    let root = vec![
        MockResponse::tool_calls(vec![call(
            "s1",
            "spawn_agent",
            json!({"task_name": "slow", "message": "slowmarker: run the long command",
                   "fork_turns": "none"}),
        )]),
        MockResponse::tool_calls(vec![call(
            "m1",
            "send_message",
            json!({"target": "slow", "message": "slowmarker: a note for you"}),
        )]),
        // Gives the child time to be inside its command (nothing to report yet).
        MockResponse::tool_calls(vec![call("w0", "wait_agent", json!({"timeout_ms": 1500}))]),
        MockResponse::tool_calls(vec![call(
            "i1",
            "interrupt_agent",
            json!({"target": "slow"}),
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ];
    let h = Harness::new(root);
    h.mock.route(
        "slowmarker",
        vec![
            MockResponse::shell("c1", &["sh", "-c", "sleep 20; echo never"]),
            MockResponse::text("should not be reached"),
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
    pool.start_worker(2);
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
        outputs[1].contains("message queued for /root/slow on its worker"),
        "{outputs:#?}"
    );
    assert!(
        outputs[3].starts_with("interrupted /root/slow"),
        "{outputs:#?}"
    );
    assert!(
        outputs[4].contains("/root/slow") && outputs[4].contains("interrupted"),
        "{outputs:#?}"
    );
    // The child never got to answer: its command was stopped on the worker.
    assert!(!requests
        .iter()
        .any(|r| r.body.to_string().contains("should not be reached")));
    let mirrored: Vec<PathBuf> = pool
        .h
        .rollouts()
        .into_iter()
        .filter(|p| !first_line(p)["agent"].is_null())
        .collect();
    assert_eq!(mirrored.len(), 1);
    let text = std::fs::read_to_string(&mirrored[0]).unwrap();
    assert!(
        text.contains("turn_aborted") || text.contains("interrupted"),
        "{text}"
    );
}

#[test]
fn a_remote_agent_s_approval_request_reaches_the_root_s_supervisor_and_its_decision_comes_back() {
    use crate::subagents_support::{call, wait_call};
    use serde_json::json;
    let root = vec![
        MockResponse::tool_calls(vec![call(
            "s1",
            "spawn_agent",
            json!({"task_name": "writer", "message": "approvemarker: write the file",
                   "fork_turns": "none"}),
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ];
    let h = Harness::new(root);
    h.mock.route(
        "approvemarker",
        vec![
            MockResponse::shell(
                "c1",
                &["sh", "-c", "echo needs-approval > made-by-remote-child"],
            ),
            MockResponse::text("child saw the decision"),
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
    // This worker asks before anything leaves its read-only sandbox.
    pool.start_worker_with(
        1,
        "approval_policy = \"untrusted\"\nsandbox_mode = \"read-only\"\n",
    );
    let child = pool
        .h
        .command()
        .args(["exec", "--skip-git-repo-check", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Well under the worker's own fallback (it denies after 120 s without a decision).
    let out = wait_limited(child, Duration::from_secs(60));
    let err = stderr(&out);
    assert!(
        out.status.success(),
        "{err}\nworker: {}",
        pool.workers[0].log()
    );
    // The root's supervisor (`exec`, which denies) was asked, with the child's command.
    assert!(
        err.contains(
            "a sub-agent's `sh -c 'echo needs-approval > made-by-remote-child'` needs approval"
        ) || err.contains(
            "a sub-agent's `sh -c \"echo needs-approval > made-by-remote-child\"` needs approval"
        ),
        "{err}"
    );
    assert!(!pool.workers[0].log().contains("no decision came"));
    assert!(!pool.h.workdir.path().join("made-by-remote-child").exists());
    let requests = pool.h.mock.requests();
    let root_last = requests
        .iter()
        .rfind(|r| troupe_mock_model::multi_agent::child_task_path(&r.body).is_none())
        .unwrap();
    let outputs = troupe_test_support::tool_outputs(&root_last.body).join("\n");
    assert!(outputs.contains("child saw the decision"), "{outputs}");
}

/// A root that spawns `far` (placement from config) then `near` (placement local), waits
/// and answers; `near` answers at once.
fn far_then_near(h: &Harness) {
    use crate::subagents_support::{call, wait_call};
    use serde_json::json;
    for response in [
        MockResponse::tool_calls(vec![call(
            "s1",
            "spawn_agent",
            json!({"task_name": "far", "message": "farmarker", "fork_turns": "none"}),
        )]),
        MockResponse::tool_calls(vec![call(
            "s2",
            "spawn_agent",
            json!({"task_name": "near", "message": "nearmarker", "fork_turns": "none",
                   "placement": "local"}),
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ] {
        h.mock.push(response);
    }
    h.mock
        .route("nearmarker", vec![MockResponse::text("near answered")]);
}

fn root_outputs(h: &Harness) -> Vec<String> {
    let requests = h.mock.requests();
    let last = requests
        .iter()
        .rfind(|r| troupe_mock_model::multi_agent::child_task_path(&r.body).is_none())
        .unwrap();
    troupe_test_support::tool_outputs(&last.body)
}

#[test]
fn an_unreachable_pool_or_no_free_worker_is_a_tool_error_and_local_agents_still_work() {
    // No server on that port.
    let h = Harness::new(Vec::new());
    let url = format!(
        "nats://127.0.0.1:{}",
        troupe_test_support::nats::free_port()
    );
    crate::cluster_support::append_secure_cluster(h.home.path(), &url, "placement = \"remote\"");
    far_then_near(&h);
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let outputs = root_outputs(&h);
    assert!(
        outputs[0].contains("cannot place `/root/far` on the pool")
            && outputs[0].contains(&format!("cannot reach the NATS server at {url}")),
        "{outputs:#?}"
    );
    assert!(outputs[2].contains("near answered"), "{outputs:#?}");

    // A server, but no worker: the request is withdrawn at its deadline.
    let h = Harness::new(Vec::new());
    let nats = crate::cluster_support::pool_nats("");
    crate::cluster_support::append_secure_cluster(
        h.home.path(),
        &nats.url(),
        "placement = \"remote\"\nspawn_deadline_ms = 1000",
    );
    far_then_near(&h);
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let outputs = root_outputs(&h);
    assert!(
        outputs[0].contains("`/root/far` was not started on the pool")
            && outputs[0].contains("no worker took the spawn request within 1000 ms"),
        "{outputs:#?}"
    );
    assert!(outputs[2].contains("near answered"), "{outputs:#?}");
    // Nothing of `far` anywhere: the root and `near` only.
    assert_eq!(h.rollouts().len(), 2);
}

#[test]
fn closing_a_remote_agent_whose_worker_is_gone_is_a_tool_error_and_ends_it_here() {
    use crate::subagents_support::{call, wait_call};
    use serde_json::json;
    let root = vec![
        MockResponse::tool_calls(vec![call(
            "s1",
            "spawn_agent",
            json!({"task_name": "lost", "message": "lostmarker: run the long command",
                   "fork_turns": "none"}),
        )]),
        // Gives the test time to kill the only worker while the child's command runs.
        MockResponse::tool_calls(vec![call("w0", "wait_agent", json!({"timeout_ms": 6000}))]),
        MockResponse::tool_calls(vec![call("c1", "close_agent", json!({"target": "lost"}))]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ];
    let h = Harness::new(root);
    h.mock.route(
        "lostmarker",
        vec![MockResponse::shell(
            "c1",
            &["sh", "-c", "sleep 30; echo never"],
        )],
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
    wait_children_running(&pool, 1);
    pool.workers[0].child.kill().unwrap();
    let out = wait_limited(child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let outputs = root_outputs(&pool.h);
    assert!(
        outputs[2]
            .contains("`/root/lost` runs on a worker of the pool, which did not take the request")
            && outputs[2].contains("closed in this tree"),
        "{outputs:#?}"
    );
    // The next wait gets its end at once instead of waiting on it.
    assert!(
        outputs[3].contains("/root/lost") && outputs[3].contains("failed"),
        "{outputs:#?}"
    );
}
