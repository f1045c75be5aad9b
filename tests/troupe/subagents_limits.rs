//! Sub-agents: bad input, limits, narrowing, failures, approvals and the cancellation tree
//! (issue #14), through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support as support;

use crate::subagents_support::*;
use serde_json::json;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::{stderr, Harness};
use troupe_mock_model::MockResponse;

fn run(h: &Harness, args: &[&str]) -> std::process::Output {
    h.command()
        .args(["exec", "--skip-git-repo-check"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text_route(h: &Harness, key: &str, answer: &str) {
    h.mock.route(key, vec![MockResponse::text(answer)]);
}

#[test]
fn bad_input_is_a_clear_tool_error_and_the_turn_goes_on() {
    let ghost = "01a23498-0000-7000-8000-000000000000";
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            spawn_call("b1", "Bad Name", "x", "none"),
            call(
                "b2",
                "spawn_agent",
                json!({"task_name": "w1", "message": "x", "fork_turns": "some"}),
            ),
            call(
                "b3",
                "spawn_agent",
                json!({"task_name": "w1", "message": "x", "agent_type": "nope"}),
            ),
            spawn_call("b4", "d1", "dup-marker first", "none"),
            spawn_call("b5", "d1", "dup-marker second", "none"),
            call(
                "b6",
                "send_message",
                json!({"target": "ghost", "message": "hi"}),
            ),
            call("b7", "interrupt_agent", json!({"target": "/etc/passwd"})),
            call(
                "b8",
                "followup_task",
                json!({"target": "/root", "message": "more"}),
            ),
            call("b9", "close_agent", json!({"target": ghost})),
            call("b10", "spawn_agent", json!({"task_name": "w2"})),
        ]),
        wait_call("w1"),
        wait_call("w2"),
        MockResponse::text("handled"),
    ]);
    text_route(&h, "dup-marker", "d1 done");
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(support::stdout(&out).trim(), "handled");
    let outputs = support::tool_outputs(&h.mock.requests().last().unwrap().body);
    // The two spawns named `d1` run together: one wins, the other is refused.
    let mut duplicates = [outputs[3].clone(), outputs[4].clone()];
    duplicates.sort();
    assert!(
        duplicates[1].contains("\"task_name\":\"/root/d1\""),
        "{duplicates:?}"
    );
    assert!(
        duplicates[0].contains("an agent named `/root/d1` already exists in this tree"),
        "{duplicates:?}"
    );
    let expect = [
        "`task_name` `Bad Name` contains `B`",
        "`fork_turns` `some` is not supported; use `all` (the default) or `none`",
        "unknown `agent_type` `nope`; known roles: default, explorer, worker",
        "d1",
        "d1",
        "no agent `/root/ghost` in this tree",
        "`/etc/passwd` is not a task path of this agent tree",
        "followup_task targets a sub-agent, not the root",
        "no agent with id `01a23498-0000-7000-8000-000000000000` in this agent tree",
        "invalid arguments for `spawn_agent`: missing field `message`",
        "d1 done",
        "No agent is running and no news is waiting",
    ];
    assert_eq!(outputs.len(), expect.len(), "{outputs:#?}");
    for (output, want) in outputs.iter().zip(expect) {
        assert!(output.contains(want), "wanted {want:?} in {output:?}");
    }
}

#[test]
fn depth_and_count_limits_are_enforced() {
    let h = Harness::with_config(
        vec![
            MockResponse::tool_calls(vec![
                spawn_call("s1", "a", "alpha-marker", "none"),
                spawn_call("s2", "b", "beta-marker", "none"),
            ]),
            MockResponse::tool_calls(vec![spawn_call("s3", "c", "gamma-marker", "none")]),
            wait_call("w1"),
            wait_call("w2"),
            wait_call("w3"),
            MockResponse::text("limits held"),
        ],
        "\n[agents]\nmax_threads = 2\nmax_depth = 1\n",
    );
    h.mock.route(
        "alpha-marker",
        vec![
            MockResponse::tool_calls(vec![spawn_call("g1", "grand", "deep-marker", "none")]),
            MockResponse::text("a done"),
        ],
    );
    text_route(&h, "beta-marker", "b done");
    text_route(&h, "gamma-marker", "c done");
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = h.mock.requests();
    let tools = |body: &serde_json::Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let root_outputs = support::tool_outputs(&requests.last().unwrap().body).join("\n");
    assert!(
        root_outputs.contains("the limit is 2 (agents.max_threads)"),
        "{root_outputs}"
    );
    assert!(tools(&requests[0].body).contains(&"spawn_agent".to_string()));
    // A child at max_depth is not offered spawn_agent, and calling it anyway is refused.
    let child_first = requests
        .iter()
        .find(|r| {
            r.body["input"]
                .to_string()
                .contains("[You are agent `/root/a`")
        })
        .unwrap();
    let child_tools = tools(&child_first.body);
    assert!(
        !child_tools.contains(&"spawn_agent".to_string()),
        "{child_tools:?}"
    );
    assert!(
        child_tools.contains(&"wait_agent".to_string()),
        "{child_tools:?}"
    );
    let child_outputs = child_request_outputs(&h, "/root/a");
    assert!(
        child_outputs.contains("there is no tool named `spawn_agent`"),
        "{child_outputs}"
    );
    assert!(!h.mock.requests().iter().any(|r| r.body["input"]
        .to_string()
        .contains("[You are agent `/root/a/grand`")));
}

#[test]
fn a_role_may_narrow_permissions_but_never_widen_them() {
    let h = Harness::with_config(
        vec![
            MockResponse::tool_calls(vec![
                call("s1", "spawn_agent", json!({"task_name": "x1", "message": "wide-marker", "agent_type": "wild"})),
                call("s2", "spawn_agent", json!({"task_name": "x2", "message": "narrow-marker", "agent_type": "explorer"})),
            ]),
            wait_call("w1"),
            MockResponse::text("narrowed"),
        ],
        "\n[agents.roles.wild]\ndescription = \"runs without a sandbox\"\nsandbox_mode = \"danger-full-access\"\n",
    );
    text_route(&h, "narrow-marker", "x2 done");
    let out = run(&h, &["-s", "workspace-write", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = h.mock.requests();
    let spawn_spec = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "spawn_agent")
        .unwrap()["description"]
        .to_string();
    assert!(
        spawn_spec.contains("`wild`: runs without a sandbox"),
        "{spawn_spec}"
    );
    assert!(spawn_spec.contains("`explorer`"), "{spawn_spec}");
    let outputs = support::tool_outputs(&requests.last().unwrap().body).join("\n");
    assert!(
        outputs.contains("role `wild` runs under sandbox `danger-full-access`, wider than this agent's `workspace-write`"),
        "{outputs}"
    );
    let lines = child_lines(&h, "/root/x2");
    let context = lines
        .iter()
        .find(|l| l["type"] == "turn_context")
        .expect("the child ran a turn");
    assert_eq!(context["payload"]["settings"]["sandbox_mode"], "read-only");
    assert_eq!(
        context["payload"]["settings"]["approval_policy"],
        "on-request"
    );
}

#[test]
fn a_failing_child_ends_failed_and_its_sibling_goes_on() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            spawn_call("s1", "bad", "fail-marker", "none"),
            spawn_call("s2", "good", "fine-marker", "none"),
        ]),
        wait_call("w1"),
        wait_call("w2"),
        wait_call("w3"),
        MockResponse::text("one failed"),
    ]);
    h.mock.route(
        "fail-marker",
        vec![MockResponse::http(
            400,
            r#"{"error":{"message":"scripted refusal","type":"invalid_request_error"}}"#,
        )],
    );
    text_route(&h, "fine-marker", "good done");
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let outputs = support::tool_outputs(&h.mock.requests().last().unwrap().body).join("\n");
    assert!(outputs.contains("/root/bad"), "{outputs}");
    assert!(outputs.contains("failed:"), "{outputs}");
    assert!(outputs.contains("scripted refusal"), "{outputs}");
    assert!(outputs.contains("good done"), "{outputs}");
}

#[test]
fn a_silent_child_times_out_and_close_kills_it() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call("s1", "slow", "slow-marker", "none")]),
        MockResponse::tool_calls(vec![call("w1", "wait_agent", json!({"timeout_ms": 300}))]),
        MockResponse::tool_calls(vec![call("c1", "close_agent", json!({"target": "slow"}))]),
        MockResponse::text("closed it"),
    ]);
    let args = json!({"command": ["sleep", "60"], "timeout_ms": 120000}).to_string();
    h.mock.route(
        "slow-marker",
        vec![MockResponse::tool_calls(vec![("k1", "shell", args)])],
    );
    let started = Instant::now();
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30));
    let outputs = support::tool_outputs(&h.mock.requests().last().unwrap().body).join("\n");
    assert!(outputs.contains("Wait timed out after 300 ms"), "{outputs}");
    assert!(outputs.contains("closing /root/slow"), "{outputs}");
    let lines = child_lines(&h, "/root/slow");
    assert!(
        lines
            .iter()
            .any(|l| l["payload"]["type"] == "turn_aborted" && l["payload"]["reason"] == "shutdown"),
        "the child's turn was not stopped: {lines:#?}"
    );
}

#[test]
fn interrupting_the_root_interrupts_its_children() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call("s1", "sleeper", "sleep-marker", "none")]),
        MockResponse::tool_calls(vec![call("w1", "wait_agent", json!({"timeout_ms": 60000}))]),
    ]);
    let pid_file = h.workdir.path().join("child.pid");
    let script = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let args = json!({"command": ["sh", "-c", script], "timeout_ms": 120000}).to_string();
    h.mock.route(
        "sleep-marker",
        vec![MockResponse::tool_calls(vec![("k1", "shell", args)])],
    );
    let mut cmd = h.command();
    cmd.args([
        "exec",
        "--skip-git-repo-check",
        "-s",
        "danger-full-access",
        "go",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .process_group(0);
    let child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            Instant::now() < deadline,
            "the child's command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let started = Instant::now();
    // SAFETY: kill(2) on the pid of the process this test spawned.
    unsafe { libc_kill(child.id() as i32) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(15));
    let lines = child_lines(&h, "/root/sleeper");
    assert!(
        lines.iter().any(|l| l["payload"]["type"] == "turn_aborted"),
        "the child's turn was not stopped"
    );
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .to_string();
    assert!(
        stat.is_empty() || state.starts_with('Z'),
        "the child's command is still running"
    );
}

unsafe fn libc_kill(pid: i32) {
    extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    kill(pid, 2);
}

#[test]
fn a_childs_approval_reaches_the_roots_supervisor() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call("s1", "toucher", "touch-marker", "none")]),
        wait_call("w1"),
        MockResponse::text("it was denied"),
    ]);
    h.mock.route(
        "touch-marker",
        vec![
            MockResponse::shell("k1", &["touch", "asked"]),
            MockResponse::text("gave up"),
        ],
    );
    let out = run(&h, &["-s", "workspace-write", "-a", "untrusted", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a sub-agent's `touch asked` needs approval"),
        "{}",
        stderr(&out)
    );
    assert!(!h.workdir.path().join("asked").exists());
    let outputs = child_request_outputs(&h, "/root/toucher");
    assert!(outputs.contains("rejected by user"), "{outputs}");
}

#[test]
fn after_a_sigkill_the_root_and_its_children_are_listed_and_resumable() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            spawn_call("s1", "one", "kill-one-marker", "none"),
            spawn_call("s2", "two", "kill-two-marker", "none"),
        ]),
        MockResponse::tool_calls(vec![call("w1", "wait_agent", json!({"timeout_ms": 60000}))]),
    ]);
    for (key, name) in [("kill-one-marker", "one"), ("kill-two-marker", "two")] {
        let pid_file = h.workdir.path().join(format!("{name}.pid"));
        let script = format!("echo $$ > {}; exec sleep 60", pid_file.display());
        let args = json!({"command": ["sh", "-c", script], "timeout_ms": 120000}).to_string();
        h.mock.route(
            key,
            vec![MockResponse::tool_calls(vec![("k1", "shell", args)])],
        );
    }
    let mut cmd = h.command();
    cmd.args([
        "exec",
        "--skip-git-repo-check",
        "-s",
        "danger-full-access",
        "go",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(h.workdir.path().join("one.pid").exists() && h.workdir.path().join("two.pid").exists())
    {
        assert!(
            Instant::now() < deadline,
            "the children never ran their commands"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let list = h.command().args(["list", "--tree"]).output().unwrap();
    let text = support::stdout(&list);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[1].starts_with("└ /root/one (") && lines[1].contains("incomplete"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("└ /root/two (") && lines[2].contains("incomplete"),
        "{text}"
    );
    let root_id = lines[0].split_whitespace().next().unwrap().to_string();

    // The root resumes: a call the killed process left open is answered as aborted, and
    // nothing before it is lost. Its children are re-attached: listed, reported by a wait,
    // and named as stopped (resumable on their own) when given more work.
    h.mock.push(MockResponse::tool_calls(vec![
        call("l1", "list_agents", json!({})),
        call("w2", "wait_agent", json!({"timeout_ms": 60000})),
        call(
            "f1",
            "followup_task",
            json!({"target": "one", "message": "more"}),
        ),
    ]));
    h.mock.push(MockResponse::text("root resumed"));
    let out = h.exec(&["resume", &root_id, "continue"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = h.mock.requests().last().unwrap().body.clone();
    let resumed = support::tool_outputs(&body);
    let n = resumed.len();
    let (listed, waited, followup) = (&resumed[n - 3], &resumed[n - 2], &resumed[n - 1]);
    for name in ["one", "two"] {
        assert!(
            listed.contains(&format!("\"task_name\":\"/root/{name}\"")),
            "{listed}"
        );
        assert!(
            waited.contains(&format!("/root/{name} (thread ")),
            "{waited}"
        );
    }
    assert!(listed.contains("\"status\":\"failed\""), "{listed}");
    assert!(waited.starts_with("Wait completed."), "{waited}");
    assert!(
        waited.contains("its process stopped before its turn ended"),
        "{waited}"
    );
    assert!(
        followup.contains("`/root/one` ran in a process that has stopped")
            && followup.contains("troupe exec resume"),
        "{followup}"
    );
    let input = body["input"].to_string();
    assert!(input.contains("kill-one-marker") && input.contains("kill-two-marker"));
    // The spawn results reached the resumed history: the link to both children is kept.
    let outputs = support::tool_outputs(&body).join("\n");
    assert!(
        outputs.contains("\"task_name\":\"/root/one\"")
            && outputs.contains("\"task_name\":\"/root/two\""),
        "{outputs}"
    );
    // A child resumes as a thread of its own, its history whole.
    let list = h.command().args(["list", "--json"]).output().unwrap();
    let child_id = support::stdout(&list)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|t| t["task_path"] == "/root/one")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    h.mock.push(MockResponse::text("child resumed"));
    let out = h.exec(&["resume", &child_id, "finish-it"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(support::stdout(&out).trim(), "child resumed");
    let input = h.mock.requests().last().unwrap().body["input"].to_string();
    assert!(input.contains("[You are agent `/root/one`"), "{input}");
}

/// Every file under `dir` whose name ends in `.lock`.
fn lock_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(lock_files(&path));
        } else if path.extension().is_some_and(|e| e == "lock") {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_chain_as_deep_as_allowed_ends_cleanly_when_the_root_finishes() {
    const DEPTH: usize = 16;
    let ready = std::env::temp_dir().join(format!("troupe-chain-{}", std::process::id()));
    let _ = std::fs::remove_file(&ready);
    let poll = format!(
        "while [ ! -f {0} ]; do sleep 0.05; done; rm {0}",
        ready.display()
    );
    let wait_ready = json!({"command": ["sh", "-c", poll], "timeout_ms": 60000}).to_string();
    let h = Harness::with_config(
        vec![
            MockResponse::tool_calls(vec![spawn_call("s", "l1", "link-01;", "none")]),
            MockResponse::tool_calls(vec![("r", "shell", wait_ready)]),
            MockResponse::text("root gives up"),
        ],
        "\n[agents]\nmax_threads = 16\nmax_depth = 16\n",
    );
    for level in 1..DEPTH {
        let next = format!("link-{:02};", level + 1);
        h.mock.route(
            &format!("link-{level:02};"),
            vec![
                MockResponse::tool_calls(vec![spawn_call(
                    "s",
                    &format!("l{}", level + 1),
                    &next,
                    "none",
                )]),
                MockResponse::tool_calls(vec![call(
                    "w",
                    "wait_agent",
                    json!({"timeout_ms": 60000}),
                )]),
            ],
        );
    }
    let deepest = format!("touch {}; exec sleep 60", ready.display());
    let args = json!({"command": ["sh", "-c", deepest], "timeout_ms": 120000}).to_string();
    h.mock.route(
        &format!("link-{DEPTH:02};"),
        vec![MockResponse::tool_calls(vec![("k", "shell", args)])],
    );
    // The root gives up once the deepest agent's command runs.
    let started = Instant::now();
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(60));
    let locks = lock_files(&h.home.path().join("sessions"));
    assert!(locks.is_empty(), "locks left behind: {locks:?}");
    let mut path = String::from("/root");
    for level in 1..=DEPTH {
        path.push_str(&format!("/l{level}"));
        let lines = child_lines(&h, &path);
        assert!(
            lines.iter().any(|l| l["payload"]["type"] == "turn_aborted"),
            "{path}: no end recorded for its running turn"
        );
    }
}
