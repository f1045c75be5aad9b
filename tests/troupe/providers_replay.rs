//! `troupe debug replay ROLLOUT --check` through the real binary: a recorded 50-call thread
//! replays offline and matches; a tool result that drifted, or instructions that changed,
//! fail naming the first difference.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_test_support as support;

use std::process::{Output, Stdio};
use support::{stderr, stdout, Harness};
use troupe_mock_model::{AutoConfig, Behaviour};

fn recorded_thread() -> (Harness, std::path::PathBuf) {
    let auto = AutoConfig {
        tool_calls: 50,
        command: "echo step".into(),
        answer: "fifty steps done".into(),
        ..AutoConfig::default()
    };
    let h = Harness::with_behaviour(Behaviour::Auto(auto), "");
    let out = h.exec(&["--json", "take fifty steps"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let thread = support::json_lines(&out)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = h.exec(&["resume", &thread, "and a second turn"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rollouts = h.rollouts();
    assert_eq!(rollouts.len(), 1);
    (h, rollouts[0].clone())
}

fn replay(h: &Harness, args: &[&str]) -> Output {
    let mut cmd = h.command();
    cmd.args(["debug", "replay"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.output().unwrap()
}

#[test]
fn a_recorded_fifty_call_thread_replays_and_checks_then_drift_is_named() {
    let (h, rollout) = recorded_thread();
    let recorded_requests = h.mock.request_count();
    assert_eq!(recorded_requests, 52);
    let path = rollout.to_str().unwrap();

    let out = replay(&h, &[path, "--check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "replayed 2 turns and 52 requests; every request matched the recording"
    );
    assert_eq!(
        h.mock.request_count(),
        recorded_requests,
        "no server was asked"
    );

    // A tool result that differs from the recording: the environment drifted.
    let text = std::fs::read_to_string(&rollout).unwrap();
    let altered = h.home.path().join("altered.jsonl");
    let needle = "\"call_id\":\"call_9_0\",\"output\":\"{\\\"output\\\":\\\"step\\\\n";
    assert!(text.contains(needle), "the 10th output is in the rollout");
    std::fs::write(
        &altered,
        text.replacen(
            needle,
            "\"call_id\":\"call_9_0\",\"output\":\"{\\\"output\\\":\\\"stop\\\\n",
            1,
        ),
    )
    .unwrap();
    let out = replay(&h, &[altered.to_str().unwrap(), "--check"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("replay check failed at request 11: the result of tool call `call_9_0` differs (environment drift)")
            && err.contains("stop")
            && err.contains("step"),
        "{err}"
    );
    // Without --check the same recording replays.
    let out = replay(&h, &[altered.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Changed instructions (a new build, a config change): the first request differs.
    let out = replay(
        &h,
        &[
            path,
            "--check",
            "-c",
            "instructions=\"You are a different agent.\"",
        ],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("replay check failed at request 1: the instructions differ from character 8")
            && err.contains("You are a different agent."),
        "{err}"
    );
}

/// A shell call whose output is `bytes` of `x`: enough to cross a small compaction limit.
fn big_output(call_id: &str, bytes: usize) -> troupe_mock_model::MockResponse {
    let script = format!("head -c {bytes} /dev/zero | tr '\\0' x");
    troupe_mock_model::MockResponse::shell(call_id, &["sh", "-c", &script])
}

#[test]
fn a_thread_compacted_mid_turn_replays_and_checks() {
    use troupe_mock_model::MockResponse;
    let limit = ["-c", "model_auto_compact_token_limit=2000"];
    let h = Harness::new(vec![
        big_output("c1", 12_000),
        // The compaction request: its answer is the summary.
        MockResponse::text("ran the big command; nothing left to do"),
        MockResponse::text("done after compaction"),
        MockResponse::text("second turn answered"),
    ]);
    let out = h.exec(&[limit[0], limit[1], "--json", "make it big"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let thread = support::json_lines(&out)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = h.exec(&[limit[0], limit[1], "resume", &thread, "and then?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(h.mock.request_count(), 4);
    let rollout = h.rollouts()[0].clone();
    let text = std::fs::read_to_string(&rollout).unwrap();
    assert_eq!(text.matches("\"type\":\"compacted\"").count(), 1);
    let path = rollout.to_str().unwrap();

    let out = replay(&h, &[path, "--check", limit[0], limit[1]]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "replayed 2 turns and 4 requests; every request matched the recording"
    );
    assert_eq!(h.mock.request_count(), 4, "no server was asked");

    // Without the limit the replay does not compact where the recording did: named.
    let out = replay(&h, &[path, "--check"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("replay check failed at request 2"), "{err}");
}
