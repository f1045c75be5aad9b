//! Bad input that used to make `troupe exec` loop forever — huge instructions, a huge prompt,
//! absurd limits, a model that never gets under the compaction limit or never stops talking —
//! now ends within a few requests, with a clear error and a small rollout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

/// Total size of the rollouts written under the harness's home.
fn rollout_bytes(h: &Harness) -> u64 {
    h.rollouts()
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

fn biggest_request(h: &Harness) -> usize {
    h.mock
        .requests()
        .iter()
        .map(|r| r.body.to_string().len())
        .max()
        .unwrap_or(0)
}

/// A shell call whose output is `bytes` of `x`.
fn big_output(call_id: &str, bytes: usize) -> MockResponse {
    let script = format!("head -c {bytes} /dev/zero | tr '\\0' x");
    MockResponse::shell(call_id, &["sh", "-c", &script])
}

/// Prepends top-level keys to the harness's config.
fn config_prefix(h: &Harness, lines: &str) {
    let path = h.home.path().join("config.toml");
    let rest = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{lines}{rest}")).unwrap();
}

#[test]
fn a_50_mb_user_agents_md_is_read_only_up_to_its_budget() {
    let h = Harness::new(vec![big_output("c1", 100), MockResponse::text("done")]);
    std::fs::write(
        h.home.path().join("AGENTS.md"),
        "a".repeat(50 * 1024 * 1024),
    )
    .unwrap();
    let out = h.exec(&["-c", "model_context_window=100000", "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "AGENTS.md: user instructions exceed their budget (32768 of 52428800 bytes kept)"
        ),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 2);
    assert!(biggest_request(&h) < 100_000, "{}", biggest_request(&h));
    assert!(rollout_bytes(&h) < 200_000, "{}", rollout_bytes(&h));
}

#[test]
fn instructions_that_cannot_fit_fail_before_any_request_naming_the_biggest_part() {
    let h = Harness::new(vec![MockResponse::text("unused")]);
    std::fs::write(h.workdir.path().join("AGENTS.md"), "r".repeat(2_000_000)).unwrap();
    let out = h.exec(&[
        "-c",
        "project_doc_max_bytes=4000000",
        "-c",
        "model_context_window=100000",
        "go",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("the initial context alone (about 50"), "{err}");
    assert!(
        err.contains("the biggest parts: AGENTS.md instructions (about 500"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 0);
    assert!(rollout_bytes(&h) < 2_200_000, "{}", rollout_bytes(&h));
}

#[test]
fn a_10_mb_prompt_is_refused_with_its_size_and_the_window() {
    let h = Harness::new(vec![MockResponse::text("unused")]);
    let prompt = "p".repeat(10 * 1024 * 1024);
    let out = h.exec_with_stdin(&["-c", "model_context_window=272000", "-"], Some(&prompt));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("the message is too large: about 2621") && err.contains("(10485760 bytes)"),
        "{err}"
    );
    assert!(
        err.contains("auto-compaction limit of 244800 tokens (context window 272000 tokens)"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 0);
    assert!(rollout_bytes(&h) < 100_000, "{}", rollout_bytes(&h));
}

#[test]
fn a_window_of_one_and_a_limit_of_zero_are_config_errors() {
    let h = Harness::new(vec![MockResponse::text("unused")]);
    config_prefix(&h, "model_context_window = 1\n");
    let out = h.exec(&["go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("config.toml:1: key `model_context_window`: 1 tokens is too small"),
        "{err}"
    );
    let h = Harness::new(vec![MockResponse::text("unused")]);
    config_prefix(&h, "\nmodel_auto_compact_token_limit = 0\n");
    let out = h.exec(&["go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("config.toml:2: key `model_auto_compact_token_limit`: 0 tokens"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn a_model_whose_every_reply_stays_over_the_limit_ends_after_the_compaction_cap() {
    // Every tool output pushes the thread over the limit, and every summary is itself over
    // it: sample, compact, sample, compact, sample, compact, sample, then the cap.
    let summary = "s".repeat(20_000);
    let mut script = Vec::new();
    for i in 0..6 {
        script.push(big_output(&format!("c{i}"), 12_000));
        script.push(MockResponse::text(&summary));
    }
    let h = Harness::new(script);
    let out = h.exec(&[
        "-c",
        "model_context_window=200000",
        "-c",
        "model_auto_compact_token_limit=2000",
        "go",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("still over the auto-compaction limit of 2000 tokens after 3 compactions in this turn (max_compactions_per_turn = 3)"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 7);
    // Each compaction records its summary and what it keeps by reference, not the history.
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    let compactions: Vec<&str> = rollout
        .lines()
        .filter(|l| l.contains("\"type\":\"compacted\""))
        .collect();
    assert_eq!(compactions.len(), 3);
    for line in compactions {
        assert!(line.contains("\"parts\"") && !line.contains("replacement_history"));
        assert!(line.len() < 25_000, "{}", line.len());
    }
    assert!(rollout_bytes(&h) < 300_000, "{}", rollout_bytes(&h));
}

#[test]
fn the_request_ceiling_stops_a_model_that_never_stops_calling_tools() {
    let script = (0..8).map(|i| big_output(&format!("c{i}"), 10)).collect();
    let h = Harness::new(script);
    let out = h.exec(&["-c", "max_requests_per_turn=4", "go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("the turn was stopped: it sent 4 model requests, the most one turn may send (max_requests_per_turn = 4)"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 4);
}

#[test]
fn endless_text_deltas_end_as_a_stream_error() {
    let h = Harness::with_config(
        vec![
            MockResponse::endless_deltas(1000),
            MockResponse::endless_deltas(1000),
        ],
        "stream_max_bytes = 100000",
    );
    let out = h.exec(&["-c", "model_providers.mock.stream_max_retries=1", "go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("gave up after 2 attempts; last error: stream error: the response exceeded 100000 bytes (stream_max_bytes)"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 2);
}

#[test]
fn a_response_cut_off_by_its_budget_keeps_what_the_model_said() {
    let h = Harness::with_config(
        vec![MockResponse::endless_deltas(1000)],
        "stream_max_bytes = 100000",
    );
    let out = h.exec(&[
        "-c",
        "model_providers.mock.stream_max_retries=0",
        "--json",
        "go",
    ]);
    assert!(!out.status.success());
    // The error says which budget cut the response off (`--json`: in the turn.failed event).
    let events = troupe_test_support::stdout(&out);
    let failed = events
        .lines()
        .find(|l| l.contains("\"turn.failed\""))
        .unwrap_or_default();
    assert!(
        failed.contains("exceeded 100000 bytes (stream_max_bytes)"),
        "{}",
        stderr(&out)
    );
    // Shown as the model's message…
    let shown: Vec<String> = troupe_test_support::json_lines(&out)
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
        .map(|e| e["item"]["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with("zzz") && shown[0].len() < 100_000,
        "{}",
        shown[0].len()
    );
    // …and kept in the rollout's history, whole.
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    let kept: Vec<serde_json::Value> = rollout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| {
            l["type"] == "response_item"
                && l["payload"]["type"] == "message"
                && l["payload"]["role"] == "assistant"
        })
        .collect();
    assert_eq!(kept.len(), 1, "{rollout}");
    assert_eq!(kept[0]["payload"]["content"][0]["text"], shown[0].as_str());
}

#[test]
fn endless_keep_alives_end_after_the_duration_bound() {
    let h = Harness::with_config(
        vec![
            MockResponse::endless_keepalive(50),
            MockResponse::endless_keepalive(50),
        ],
        "stream_max_duration_ms = 1500",
    );
    let started = std::time::Instant::now();
    let out = h.exec(&["-c", "model_providers.mock.stream_max_retries=1", "go"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("gave up after 2 attempts; last error: the response took longer than 1500 ms (stream_max_duration_ms)"),
        "{err}"
    );
    assert_eq!(h.mock.request_count(), 2);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn resume_after_a_compaction_rebuilds_the_exact_history() {
    let h = Harness::new(vec![
        big_output("c1", 12_000),
        MockResponse::text("SUMMARY-1"),
        MockResponse::text("done"),
        MockResponse::text("after resume"),
    ]);
    let limit = ["-c", "model_auto_compact_token_limit=2000"];
    let first = h.exec(&[&limit[..], &["do it"]].concat());
    assert!(first.status.success(), "{}", stderr(&first));
    let second = h.exec(&[&limit[..], &["resume", "--last", "again"]].concat());
    assert!(second.status.success(), "{}", stderr(&second));
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 4);
    let before = requests[2].input();
    let after = requests[3].input();
    // The model sees after the resume exactly what it saw before, plus its answer and the
    // new message: the compaction replays to the same history.
    assert!(
        before[before.len() - 2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .ends_with("SUMMARY-1"),
        "{before:?}"
    );
    assert_eq!(&after[..before.len()], before);
    assert_eq!(after.len(), before.len() + 2, "{after:?}");
    assert_eq!(after[before.len()]["content"][0]["text"], "done");
    assert_eq!(after[before.len() + 1]["content"][0]["text"], "again");
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    assert_eq!(rollout.matches("\"type\":\"compacted\"").count(), 1);
    assert!(!rollout.contains("replacement_history"));
}

#[test]
fn a_30_mb_skill_named_in_a_message_is_attached_only_up_to_its_budget() {
    let h = Harness::new(vec![MockResponse::text("done")]);
    let dir = h.home.path().join("skills/big");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::from("---\nname: big\ndescription: a big one\n---\n");
    text.push_str(&"k".repeat(30 * 1024 * 1024));
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
    let out = h.exec(&["use $big please"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("only its first 32768 bytes were attached"),
        "{}",
        stderr(&out)
    );
    assert_eq!(h.mock.request_count(), 1);
    let body = h.mock.requests()[0].body.to_string();
    assert!(
        body.contains("[skill truncated: 32768 of 31457"),
        "{body:.300}"
    );
    assert!(body.len() < 100_000, "{}", body.len());
    assert!(rollout_bytes(&h) < 200_000, "{}", rollout_bytes(&h));
}
