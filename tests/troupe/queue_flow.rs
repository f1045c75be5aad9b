//! `troupe queue` through the real binary against the mock model: a message queued for a
//! thread another `exec` is running joins that turn at its next sampling boundary; one
//! queued for a closed thread becomes input when it is resumed (or at once with `--resume`);
//! an unknown thread is a clear error.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, stdout, Harness};

fn user_texts(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["role"] == "user")
        .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|part| part["text"].as_str().map(str::to_string))
        .collect()
}

fn queue(h: &Harness, args: &[&str]) -> Output {
    h.command()
        .arg("queue")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Files still waiting (not hidden, not set aside) in the thread's inbox.
fn waiting(h: &Harness, thread: &str) -> usize {
    let dir = h.home.path().join("queue").join(thread);
    std::fs::read_dir(dir).map_or(0, |entries| entries.flatten().count())
}

/// Files of the thread's inbox some process has claimed.
fn claimed(h: &Harness, thread: &str) -> usize {
    let dir = h.home.path().join("queue").join(thread);
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".claimed-"))
            .count()
    })
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn thread_of_finished_run(h: &Harness) -> String {
    let out = h.exec(&["--json", "first task"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    first["thread_id"].as_str().unwrap().to_string()
}

#[test]
fn a_running_exec_takes_a_queued_message_before_its_next_request() {
    let h = Harness::new(vec![]);
    let work = h.workdir.path();
    let (started, release) = (work.join("started"), work.join("release"));
    // The tool runs until the test lets it go: the message is queued while it runs.
    let script = format!(
        "touch {}; while [ ! -f {} ]; do sleep 0.05; done",
        started.display(),
        release.display()
    );
    h.mock
        .push(MockResponse::shell("c1", &["bash", "-c", &script]));
    h.mock.push(MockResponse::text("done"));
    let mut child = h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "danger-full-access",
            "--json",
            "go",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let thread = first["thread_id"].as_str().unwrap().to_string();
    wait_until("the tool to start", || started.exists());

    let out = queue(
        &h,
        &["--thread", &thread, "--message", "also check the tests"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("Queued message ") && stdout(&out).contains(&thread),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("is running the thread"),
        "{}",
        stderr(&out)
    );
    // The running process claims it (and deletes it once the turn has recorded it).
    wait_until("the message to be taken", || claimed(&h, &thread) == 1);
    std::fs::write(&release, "").unwrap();
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = child.wait().unwrap();
    assert!(status.success(), "{rest:?}");
    assert_eq!(waiting(&h, &thread), 0);

    let requests = h.mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(!user_texts(&requests[0].body).contains(&"also check the tests".to_string()));
    let second = user_texts(&requests[1].body);
    assert_eq!(
        second.last().map(String::as_str),
        Some("also check the tests")
    );
    // Delivered once: the thread's history (its rollout's items) holds it once.
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    let in_history = rollout
        .lines()
        .filter(|line| line.contains("\"type\":\"response_item\""))
        .filter(|line| line.contains("also check the tests"))
        .count();
    assert_eq!(in_history, 1, "{rollout}");
}

/// A message claimed after the turn's last request (while the final answer streams) was
/// never part of that turn: it waits in the inbox again, not started as a turn of its own
/// that `exec`'s exit would cut short.
#[test]
fn a_message_that_arrives_during_the_final_answer_waits_for_the_next_turn() {
    let h = Harness::new(vec![]);
    // One byte per write, a millisecond apart: the answer takes seconds to stream.
    h.mock
        .push(MockResponse::text(&"slow answer ".repeat(300)).odd_bytes(1));
    let child = h
        .command()
        .args(["exec", "--skip-git-repo-check", "--json", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the final request", || h.mock.requests().len() == 1);
    let thread = latest_thread(&h);
    let out = queue(&h, &["--thread", &thread, "--message", "a late thought"]);
    assert!(out.status.success(), "{}", stderr(&out));
    wait_until("the message to be claimed", || claimed(&h, &thread) == 1);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    assert_eq!(h.mock.requests().len(), 1);
    assert_eq!((waiting(&h, &thread), claimed(&h, &thread)), (1, 0));
    let rollout = std::fs::read_to_string(&h.rollouts()[0]).unwrap();
    assert!(!rollout.contains("a late thought"), "{rollout}");
}

/// The id of the only thread in the harness's home (from its rollout's file name).
fn latest_thread(h: &Harness) -> String {
    wait_until("the rollout", || !h.rollouts().is_empty());
    let name = h.rollouts()[0].file_stem().unwrap().to_string_lossy().to_string();
    name.rsplit('-').take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("-")
}

#[test]
fn a_message_for_a_closed_thread_is_input_of_its_next_turn() {
    let h = Harness::new(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let thread = thread_of_finished_run(&h);
    let out = queue(
        &h,
        &["--thread", &thread[..8], "--message", "queued while closed"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no process is running the thread"));
    assert_eq!(waiting(&h, &thread), 1);

    let out = h.exec(&["resume", &thread, "next prompt"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let texts = user_texts(&h.mock.requests()[1].body);
    let n = texts.len();
    assert_eq!(texts[n - 2..], ["queued while closed", "next prompt"]);
    assert_eq!(waiting(&h, &thread), 0);
}

#[test]
fn queue_resume_runs_the_thread_with_the_message() {
    let h = Harness::new(vec![
        MockResponse::text("one"),
        MockResponse::text("answered"),
    ]);
    let thread = thread_of_finished_run(&h);
    let out = queue(
        &h,
        &["--thread", &thread, "--message", "follow up", "--resume"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "answered");
    let texts = user_texts(&h.mock.requests()[1].body);
    assert_eq!(texts.last().map(String::as_str), Some("follow up"));
    assert_eq!(waiting(&h, &thread), 0);
}

#[test]
fn bad_queue_arguments_are_clear_errors() {
    let h = Harness::new(vec![MockResponse::text("one")]);
    let out = queue(
        &h,
        &[
            "--thread",
            "0199ffff-0000-7000-8000-000000000000",
            "--message",
            "hi",
        ],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--thread 0199ffff-0000-7000-8000-000000000000"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"));
    let thread = thread_of_finished_run(&h);
    let out = queue(&h, &["--thread", &thread, "--message", "  "]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--message"), "{}", stderr(&out));
    assert!(!Path::new(&h.home.path().join("queue").join(&thread)).exists());
}
