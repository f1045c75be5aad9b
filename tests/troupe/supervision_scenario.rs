//! A supervisor's day with a tree of eight agents, through the real binary: a TUI in tmux runs
//! the tree, a `troupe web` on the same home follows it in headless Chromium
//! (tests/web/scenario_cases.mjs). Two agents ask approval at once (the page approves one and
//! denies the other), one agent's command fails and then its turn, one runs a long command the
//! page interrupts, four just finish. At the end the page's rows, the TUI's threads panel,
//! the children's rollouts and the root's rollout say the same of every agent, and no screen
//! shows the runtime's `<subagent_notification>` text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::subagents_support::{call, spawn_call};
use crate::tui_tmux::{Tmux, PATIENCE};
use crate::web_page::{require_browser_tools, run_page_cases, start_web};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

const ROOT_PROMPT: &str = "scenario-root: split the work over eight agents";

/// Each agent (its task name) and how it ends, in the words the rollouts use.
const AGENTS: [(&str, &str); 8] = [
    ("ok1", "completed"),
    ("ok2", "completed"),
    ("ok3", "completed"),
    ("ok4", "completed"),
    ("ask1", "completed"),
    ("ask2", "completed"),
    ("fail", "failed"),
    ("long", "interrupted"),
];

/// The same status as the page and the TUI's panel name it.
fn shown(status: &str) -> &str {
    match status {
        "completed" => "done",
        other => other,
    }
}

/// What /root/ask2 runs once denied: it leaves a mark, then runs until released.
const HELD_AFTER_DENIAL: &str =
    "touch scn-ask2-denied; while [ ! -e scn-release ]; do sleep 0.1; done";

/// A command run outside the sandbox, which under `on-request` is asked first: it leaves
/// `scn-ran-NAME`, then runs until `scn-release` exists.
fn escalated(name: &str) -> MockResponse {
    let script = format!("touch scn-ran-{name}; while [ ! -e scn-release ]; do sleep 0.1; done");
    MockResponse::tool_calls(vec![call(
        &format!("c-{name}"),
        "shell",
        json!({"command": ["sh", "-c", script], "sandbox_permissions": "require_escalated",
               "justification": "write outside the sandbox"}),
    )])
}

fn script_the_mock(harness: &Harness) {
    for (name, _) in AGENTS {
        let marker = format!("scn-{name}-marker");
        let script = match name {
            "ask1" => vec![escalated(name), MockResponse::text("ask1 finished")],
            // Denied, it goes on with a command of its own, held until released too.
            "ask2" => vec![
                escalated(name),
                MockResponse::shell("c-ask2-next", &["sh", "-c", HELD_AFTER_DENIAL]),
                MockResponse::text("ask2 finished"),
            ],
            // Its command exits 3, then its model fails for good: the turn fails.
            "fail" => vec![
                MockResponse::shell("c-fail", &["sh", "-c", "echo scn-fail-out; exit 3"]),
                MockResponse::insufficient_quota(),
            ],
            "long" => vec![MockResponse::shell(
                "c-long",
                &[
                    "sh",
                    "-c",
                    "echo scn-long-tick; touch scn-long-started; exec sleep 600",
                ],
            )],
            _ => vec![
                MockResponse::shell(&format!("c-{name}"), &["echo", &format!("scn-{name}-out")]),
                MockResponse::text(&format!("{name} finished")),
            ],
        };
        harness.mock.route(&marker, script);
    }
}

/// The root spawns the eight at once, then waits until none runs: a wait returns with every
/// report there is, so eight cover the eight, and one with nothing to wait for answers at once.
fn root_script() -> Vec<MockResponse> {
    let spawns = AGENTS
        .iter()
        .map(|(name, _)| {
            spawn_call(
                &format!("sp-{name}"),
                name,
                &format!("scn-{name}-marker: your part"),
                "none",
            )
        })
        .collect();
    let mut script = vec![MockResponse::tool_calls(spawns)];
    let wait = |i| {
        call(
            &format!("w{i}"),
            "wait_agent",
            json!({"timeout_ms": 600_000}),
        )
    };
    script.extend((0..9).map(|i| MockResponse::tool_calls(vec![wait(i)])));
    script.push(MockResponse::text("scenario root done"));
    script
}

/// The status and tokens of every row of the TUI's threads panel, by agent path.
fn panel_rows(screen: &str) -> BTreeMap<String, (String, u64)> {
    const WORDS: [&str; 6] = [
        "waiting for approval",
        "interrupted",
        "running",
        "failed",
        "done",
        "idle",
    ];
    screen
        .lines()
        .filter(|l| l.contains(" tok "))
        .filter_map(|line| {
            let path = line
                .split_whitespace()
                .find(|w| w.starts_with("/root"))?
                .to_string();
            let status = WORDS.iter().find(|w| line.contains(&format!(" {w} ")))?;
            let words: Vec<&str> = line.split_whitespace().collect();
            let tok = words.iter().position(|w| *w == "tok")?;
            let tokens = words.get(tok.checked_sub(1)?)?.parse().ok()?;
            Some((path, ((*status).to_string(), tokens)))
        })
        .collect()
}

/// How the last turn recorded in `lines` ended.
fn last_turn_end(lines: &[Value]) -> String {
    let end = lines
        .iter()
        .rev()
        .find(|l| {
            matches!(
                l["payload"]["type"].as_str(),
                Some("turn_complete" | "turn_aborted")
            )
        })
        .expect("a turn ended");
    match end["payload"]["type"].as_str() {
        Some("turn_complete") => "completed".to_string(),
        _ => end["payload"]["reason"].as_str().unwrap().to_string(),
    }
}

fn read_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("rollout readable")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Every rollout's lines by task path (`/root` for the root).
fn rollouts_by_path(harness: &Harness) -> BTreeMap<String, Vec<Value>> {
    harness
        .rollouts()
        .iter()
        .map(|path| {
            let lines = read_lines(path);
            let task = lines[0]["payload"]["agent"]["task_path"]
                .as_str()
                .unwrap_or("/root")
                .to_string();
            (task, lines)
        })
        .collect()
}

/// The thread's total tokens, as its last recorded count says.
fn recorded_tokens(lines: &[Value]) -> u64 {
    lines
        .iter()
        .rev()
        .find(|l| l["payload"]["type"] == "token_count")
        .and_then(|l| l["payload"]["total"]["total_tokens"].as_u64())
        .unwrap_or(0)
}

/// What the root's history was told of each agent: the status line of each report.
fn reported(root: &[Value]) -> BTreeMap<String, String> {
    let mut seen = BTreeMap::new();
    for line in root {
        let text = line["payload"]["content"].to_string();
        for report in text.split("<subagent_notification>").skip(1) {
            let path = report
                .split("agent: ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .unwrap()
                .to_string();
            let status = report
                .split("status: ")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_alphabetic()).next())
                .unwrap()
                .to_string();
            seen.insert(path, status);
        }
    }
    seen
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_agents_supervised_from_the_page_while_the_tui_watches() {
    require_browser_tools();
    let harness = crate::app_server_support::harness(root_script());
    script_the_mock(&harness);
    let work = harness.workdir.path().to_path_buf();
    let tmux = tokio::task::block_in_place(|| {
        let tmux = Tmux::start_sized(
            &harness,
            "scenario",
            &["-s", "workspace-write", "-a", "on-request", ROOT_PROMPT],
            120,
            40,
        );
        // The tree runs in the TUI: both requests asked there, the long command started.
        tmux.wait_on_screen("(+1 more)");
        wait_until("the long command started", || {
            work.join("scn-long-started").exists()
        });
        tmux
    });

    let server = start_web(&harness, "info").await;
    let agents: serde_json::Map<String, Value> = AGENTS
        .iter()
        .map(|(name, status)| (format!("/root/{name}"), json!(shown(status))))
        .collect();
    // While the page works: once the page approved /root/ask1 (its command runs) and denied
    // /root/ask2 (it went on), the TUI no longer asks either; then both commands may end.
    let released = work.clone();
    let watch = tokio::task::spawn_blocking(move || {
        wait_until("the page answered both", || {
            released.join("scn-ran-ask1").exists() && released.join("scn-ask2-denied").exists()
        });
        // Released whatever it saw, so that the page's half ends and this failure is the one
        // reported.
        let deadline = Instant::now() + PATIENCE;
        let stale = loop {
            let screen = tmux.screen();
            if !screen.contains("approval needed") {
                break None;
            }
            if Instant::now() > deadline {
                break Some(screen);
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        std::fs::write(released.join("scn-release"), "").unwrap();
        (tmux, stale)
    });
    let out = run_page_cases(
        server,
        &work,
        "supervision_scenario",
        json!({"scenario": {"rootPrompt": ROOT_PROMPT, "agents": agents}}),
    )
    .await;
    let (tmux, stale) = watch.await.expect("the TUI watch");
    if let Some(screen) = stale {
        panic!("the TUI still asks what the page answered:\n{screen}");
    }
    let printed = |what: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(what))
            .expect("the page printed its rows")
            .to_string()
    };
    let page: BTreeMap<String, String> =
        serde_json::from_str(&printed("scenario-statuses ")).unwrap();
    let page_tokens: BTreeMap<String, u64> =
        serde_json::from_str(&printed("scenario-tokens ")).unwrap();

    // The approved command ran, the denied one did not.
    assert!(work.join("scn-ran-ask1").exists());
    assert!(!work.join("scn-ran-ask2").exists());

    // The TUI watched the same tree: its panel ends the same way, row by row.
    let (panel, history) = tokio::task::block_in_place(|| {
        tmux.wait_for("scenario root done");
        tmux.keys(&["C-t"]);
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = tmux.screen();
            let panel = panel_rows(&screen);
            let settled = AGENTS.iter().all(|(name, status)| {
                panel.get(&format!("/root/{name}")).map(|r| r.0.as_str()) == Some(shown(status))
            });
            if settled {
                break (panel, tmux.history());
            }
            assert!(
                Instant::now() < deadline,
                "the panel never settled:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    assert!(!history.contains("subagent_notification"), "{history}");

    // The rollouts on disk: each child's last turn, and what the root was told of each.
    let rollouts = rollouts_by_path(&harness);
    let root_reports = reported(&rollouts["/root"]);
    assert_eq!(last_turn_end(&rollouts["/root"]), "completed");
    for (name, status) in AGENTS {
        let path = format!("/root/{name}");
        let child = &rollouts[&path];
        assert_eq!(last_turn_end(child), status, "{path}'s rollout");
        assert_eq!(
            root_reports.get(&path).map(String::as_str),
            Some(status),
            "the root's report of {path}"
        );
        assert_eq!(
            page.get(&path).map(String::as_str),
            Some(shown(status)),
            "the page's row of {path}"
        );
        assert_eq!(
            panel.get(&path).map(|r| r.0.as_str()),
            Some(shown(status)),
            "the TUI's row of {path}"
        );
        // Their tokens too: the TUI's (relayed live), the page's (read from the rollout of a
        // thread followed once most had ended) and the rollout's last count.
        let tokens = recorded_tokens(child);
        assert!(tokens > 0, "{path} recorded no tokens");
        assert_eq!(panel[&path].1, tokens, "the TUI's tokens of {path}");
        assert_eq!(
            page_tokens.get(&path),
            Some(&tokens),
            "the page's tokens of {path}"
        );
    }
    let fail_out = rollouts["/root/fail"]
        .iter()
        .find(|l| l["payload"]["type"] == "function_call_output")
        .unwrap()
        .to_string();
    assert!(fail_out.contains("scn-fail-out"), "{fail_out}");

    tokio::task::block_in_place(|| {
        tmux.keys(&["Escape"]);
        tmux.wait_on_screen("Ask troupe to do something");
        tmux.keys(&["C-c"]);
        assert_eq!(tmux.wait_exit(), 0);
    });
}
