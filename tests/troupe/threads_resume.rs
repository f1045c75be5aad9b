//! Resume against the mock model: the first request after a resume continues the prompt of
//! the last one before the stop byte for byte (prompt cache), with the same instructions and
//! tools; the resumed thread appends to the same rollout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::Value;
use troupe_actors::rollout_recorder::{loader, replay::replay};
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, stdout, Harness};

/// The `response.output_item.done` items of a scripted SSE answer.
fn output_items(response: &MockResponse) -> Vec<Value> {
    match response {
        MockResponse::Sse { events, .. } => events
            .iter()
            .filter(|e| e["type"] == "response.output_item.done")
            .map(|e| e["item"].clone())
            .collect(),
        other => panic!("not an SSE answer: {other:?}"),
    }
}

fn thread_id(output: &std::process::Output) -> String {
    json_lines(output)
        .into_iter()
        .find(|e| e["type"] == "thread.started")
        .and_then(|e| e["thread_id"].as_str().map(str::to_string))
        .expect("thread.started")
}

#[test]
fn the_first_request_after_resume_continues_the_last_prompt_byte_for_byte() {
    let answer = MockResponse::text("first answer");
    let harness = Harness::new(vec![
        MockResponse::shell("call_1", &["sh", "-c", "echo hi"]),
        answer.clone(),
        MockResponse::text("second answer"),
    ]);
    let first = harness.exec(&["--json", "list the files"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let id = thread_id(&first);
    let rollouts = harness.rollouts();
    assert_eq!(rollouts.len(), 1);

    let second = harness.exec(&["--json", "resume", &id, "and now the tests"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(thread_id(&second), id, "same thread");
    assert_eq!(
        harness.rollouts(),
        rollouts,
        "same rollout file, no new one"
    );

    let requests = harness.mock.requests();
    assert_eq!(requests.len(), 3);
    let (last_before, first_after) = (&requests[1], &requests[2]);
    let before = last_before.input();
    let after = first_after.input();
    let outputs = output_items(&answer);
    assert_eq!(after.len(), before.len() + outputs.len() + 1);
    for (i, item) in before.iter().enumerate() {
        assert_eq!(
            serde_json::to_string(&after[i]).unwrap(),
            serde_json::to_string(item).unwrap(),
            "input item {i} differs"
        );
    }
    // The previous answer follows, as the model sent it (the fields Troupe keeps).
    let kept = &after[before.len()];
    assert_eq!(kept["type"], outputs[0]["type"]);
    assert_eq!(kept["id"], outputs[0]["id"]);
    assert_eq!(kept["role"], "assistant");
    assert_eq!(kept["content"][0]["text"], outputs[0]["content"][0]["text"]);
    assert_eq!(
        after.last().unwrap()["content"][0]["text"],
        "and now the tests"
    );
    assert_eq!(
        first_after.body["instructions"],
        last_before.body["instructions"]
    );
    assert_eq!(
        serde_json::to_string(&first_after.body["tools"]).unwrap(),
        serde_json::to_string(&last_before.body["tools"]).unwrap()
    );

    // The file holds both turns; replaying it gives what the model saw plus the new answer.
    let loaded = loader::load(&rollouts[0]).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let history = replay(&loaded.lines);
    assert_eq!(history.tracker.turns, 2);
    assert_eq!(history.history.len(), after.len() + 1);
    let replayed: Vec<Value> = history.history[..after.len()]
        .iter()
        .map(|item| serde_json::to_value(item).unwrap())
        .collect();
    assert_eq!(replayed, after.to_vec());
}

#[test]
fn resume_last_picks_the_most_recent_thread_of_this_directory() {
    let harness = Harness::new(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("three"),
    ]);
    let first = harness.exec(&["--json", "first thread"]);
    let second = harness.exec(&["--json", "second thread"]);
    assert!(first.status.success() && second.status.success());
    let resumed = harness.exec(&["--json", "resume", "--last", "more"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(thread_id(&resumed), thread_id(&second));
    let texts: Vec<String> = harness.mock.requests()[2]
        .input()
        .iter()
        .filter(|i| i["role"] == "user")
        .map(|i| {
            i["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(texts.contains(&"second thread".to_string()), "{texts:?}");
    assert!(!texts.contains(&"first thread".to_string()), "{texts:?}");
    assert_eq!(texts.last().map(String::as_str), Some("more"));
}

#[test]
fn resume_last_with_cd_picks_the_thread_of_that_directory_by_path() {
    let harness = Harness::new(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("three"),
        MockResponse::text("four"),
    ]);
    let (a, b) = (
        harness.workdir.path().join("a"),
        harness.workdir.path().join("b"),
    );
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::os::unix::fs::symlink(&a, harness.workdir.path().join("link-to-a")).unwrap();
    let in_a = harness.exec(&["--json", "--cd", a.to_str().unwrap(), "thread in a"]);
    let in_b = harness.exec(&["--json", "--cd", b.to_str().unwrap(), "thread in b"]);
    assert!(in_a.status.success() && in_b.status.success());
    // The process runs in the work dir (neither a nor b), and b's thread is the newer one:
    // only `--cd` can make a's thread the pick. Spelt through a symlink and relatively.
    let resumed = harness.exec(&["--json", "--cd", "./link-to-a/", "resume", "--last", "more"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(thread_id(&resumed), thread_id(&in_a));
    // `--cd` after the subcommand means the same.
    let resumed = harness.exec(&["--json", "resume", "--last", "--cd", "b/../a", "again"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(thread_id(&resumed), thread_id(&in_a));
    let requests = harness.mock.requests();
    let last = requests.last().unwrap().input();
    let texts: Vec<&str> = last
        .iter()
        .filter(|i| i["role"] == "user")
        .filter_map(|i| i["content"][0]["text"].as_str())
        .collect();
    assert!(texts.contains(&"thread in a"), "{texts:?}");
    assert!(!texts.contains(&"thread in b"), "{texts:?}");
}

#[test]
fn resume_errors_are_clear() {
    let harness = Harness::new(vec![]);
    let unknown = harness.exec(&["resume", "0000dead", "hi"]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains("no thread 0000dead"),
        "{}",
        stderr(&unknown)
    );
    let none = harness.exec(&["resume", "--last", "hi"]);
    assert!(!none.status.success());
    assert!(
        stderr(&none).contains("no thread to resume"),
        "{}",
        stderr(&none)
    );
    assert_eq!(harness.mock.request_count(), 0);
}

#[test]
fn a_rollout_from_a_newer_troupe_is_not_resumed_and_not_changed() {
    let harness = Harness::new(vec![MockResponse::text("one")]);
    let first = harness.exec(&["--json", "hello"]);
    assert!(first.status.success());
    let path = harness.rollouts().remove(0);
    let current = format!(
        "\"version\":{}",
        troupe_messages::rollout::ROLLOUT_FORMAT_VERSION
    );
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replacen(&current, "\"version\":999", 1);
    std::fs::write(&path, &text).unwrap();
    let resumed = harness.exec(&["resume", &thread_id(&first), "more"]);
    assert!(!resumed.status.success());
    assert!(
        stderr(&resumed).contains("newer troupe"),
        "{}",
        stderr(&resumed)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn a_rollout_from_a_newer_troupe_is_not_forked() {
    let harness = Harness::new(vec![MockResponse::text("one")]);
    let first = harness.exec(&["--json", "hello"]);
    assert!(first.status.success());
    let path = harness.rollouts().remove(0);
    let current = format!(
        "\"version\":{}",
        troupe_messages::rollout::ROLLOUT_FORMAT_VERSION
    );
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replacen(&current, "\"version\":999", 1);
    std::fs::write(&path, &text).unwrap();
    let forked = harness
        .command()
        .args(["fork", &thread_id(&first)])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!forked.status.success(), "{}", stdout(&forked));
    let err = stderr(&forked);
    let supported = format!(
        "this build reads up to {}",
        troupe_messages::rollout::ROLLOUT_FORMAT_VERSION
    );
    assert!(
        err.contains("rollout format 999") && err.contains(&supported),
        "{err}"
    );
    assert_eq!(harness.rollouts().len(), 1, "no fork was written");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn a_thread_open_in_another_live_process_is_not_resumed() {
    let harness = Harness::new(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let first = harness.exec(&["--json", "hello"]);
    assert!(first.status.success());
    let path = harness.rollouts().remove(0);
    let mut other = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let lock = troupe_actors::rollout_recorder::lock::lock_path(&path);
    std::fs::write(&lock, other.id().to_string()).unwrap();
    let before = std::fs::read(&path).unwrap();
    let resumed = harness.exec(&["resume", &thread_id(&first), "more"]);
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(!resumed.status.success());
    let err = stderr(&resumed);
    assert!(
        err.contains(&format!("in use by process {}", other.id())),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "file untouched");
    // Once that process is gone its lock is stale and is taken over.
    let resumed = harness.exec(&["resume", &thread_id(&first), "more"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(!lock.exists());
}
