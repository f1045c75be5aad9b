//! The security review's attacks on command rules, the known-safe list and rules loading,
//! each through the real `troupe exec` against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, tool_outputs, Harness};

fn shell(call: &str, argv: &[&str]) -> MockResponse {
    MockResponse::shell(call, argv)
}

/// Runs `troupe exec --skip-git-repo-check ARGS… go`, killed (and failed) after `limit`.
fn exec_within(h: &Harness, args: &[&str], limit: Duration) -> Output {
    let mut cmd: Command = h.command();
    cmd.args(["exec", "--skip-git-repo-check"])
        .args(args)
        .arg("go")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("troupe exec did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn write_rules(h: &Harness, text: &str) {
    let dir = h.home.path().join("rules");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("default.rules"), text).unwrap();
}

#[test]
fn an_allow_rule_for_one_part_does_not_unsandbox_the_rest() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("escaped");
    let script = format!("ls && touch {}", marker.display());
    let h = Harness::new(vec![
        shell("c1", &["bash", "-c", &script]),
        MockResponse::text("done"),
    ]);
    write_rules(&h, "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\n");
    let out = exec_within(
        &h,
        &["-s", "read-only", "-a", "never"],
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !marker.exists(),
        "`touch` ran outside the sandbox on the strength of an allow rule for `ls`"
    );
}

#[test]
fn a_forbidden_rule_is_not_evaded_by_redirections_or_substitutions() {
    for (n, script) in [
        "rm victim > /dev/null",
        "rm victim 2>&1",
        "echo $(rm victim)",
        "FOO=1 rm victim",
        "/bin/rm victim",
        "env rm victim",
    ]
    .into_iter()
    .enumerate()
    {
        let h = Harness::new(vec![
            shell(&format!("c{n}"), &["bash", "-c", script]),
            MockResponse::text("done"),
        ]);
        write_rules(
            &h,
            "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"keep files\")\n",
        );
        std::fs::write(h.workdir.path().join("victim"), "x").unwrap();
        let out = exec_within(
            &h,
            &["-s", "danger-full-access", "-a", "never"],
            Duration::from_secs(60),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(h.workdir.path().join("victim").exists(), "{script}");
        let outputs = tool_outputs(&h.mock.requests()[1].body);
        assert!(
            outputs[0].contains("blocked by a command rule: keep files"),
            "{script}: {outputs:?}"
        );
    }
}

#[test]
fn known_safe_commands_that_write_or_execute_need_approval_under_untrusted() {
    let mut attacks: Vec<Vec<&str>> = vec![
        vec!["git", "grep", "-Otouch pwned1", "-e", "hello"],
        vec!["git", "grep", "--open-files-in-pager=touch pwned2", "hello"],
        vec!["sort", "-opwned3", "f"],
        vec!["sort", "--outp=pwned4", "f"],
        vec!["sort", "-S", "1k", "--compress-prog=./pwn.sh", "big"],
        vec!["sed", "-n", "1p", "-e", "e touch pwned6", "f"],
        vec!["uniq", "f", "pwned7"],
    ];
    let tree = Command::new("tree").arg("--version").output().is_ok();
    if tree {
        attacks.push(vec!["tree", "-o", "pwned8"]);
    } else {
        eprintln!("tree is not installed: `tree -o` not tried");
    }
    let mut script: Vec<MockResponse> = attacks
        .iter()
        .enumerate()
        .map(|(i, argv)| shell(&format!("c{i}"), argv))
        .collect();
    script.push(MockResponse::text("done"));
    let h = Harness::new(script);
    let w = h.workdir.path();
    std::fs::write(w.join("f"), "hello\nhello\n").unwrap();
    let big: String = (0..20_000).map(|i| format!("{}\n", 20_000 - i)).collect();
    std::fs::write(w.join("big"), big).unwrap();
    let pwn = w.join("pwn.sh");
    std::fs::write(&pwn, "#!/bin/sh\ntouch pwned5\ncat\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pwn, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for git in [
        &["init", "-q"][..],
        &["add", "f"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ],
    ] {
        let ok = Command::new("git")
            .args(git)
            .current_dir(w)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{git:?}");
    }
    let out = exec_within(
        &h,
        &["-s", "workspace-write", "-a", "untrusted"],
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for i in 1..=8 {
        let marker = format!("pwned{i}");
        assert!(
            !w.join(&marker).exists(),
            "{marker} was written without approval"
        );
    }
    // Every one was asked about (and denied by `exec`, which cannot ask).
    let last = h.mock.requests().last().unwrap().body.clone();
    let outputs = tool_outputs(&last);
    assert_eq!(outputs.len(), attacks.len());
    assert!(
        outputs.iter().all(|o| o == "exec command rejected by user"),
        "{outputs:?}"
    );
}

#[test]
fn a_fifo_in_place_of_a_rules_file_fails_start_up_with_its_name() {
    let h = Harness::new(vec![MockResponse::text("never reached")]);
    let dir = h.home.path().join("rules");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("team.rules");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = exec_within(&h, &["-s", "read-only"], Duration::from_secs(30));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("team.rules"), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    assert!(h.mock.requests().is_empty());
}

#[test]
fn a_rules_file_that_never_finishes_fails_start_up_with_its_name() {
    let h = Harness::new(vec![MockResponse::text("never reached")]);
    write_rules(
        &h,
        "def spin():\n    n = 0\n    for i in range(1000000000):\n        n = i\nspin()\n",
    );
    let out = exec_within(&h, &["-s", "read-only"], Duration::from_secs(30));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("default.rules"), "{err}");
    assert!(h.mock.requests().is_empty());
}

/// Found by the `rules` fuzz target (`fuzz/known/rules-oom-a85ce494.rules`): one expression
/// that asks for a list of hundreds of millions of values, and a repetition that asks for
/// 2 GB at once. The evaluating child hits its memory limit (or, slower, its time limit);
/// `troupe` says so, names the file and exits without a request.
#[test]
fn a_rules_file_that_grows_without_bound_fails_start_up_with_its_name() {
    for (text, why) in [
        (
            "def f(n):\n    return [x for x in range(n)]\nf(388888888)\n",
            &["memory", "did not finish"][..],
        ),
        (
            "x = \"x\" * 2000000000\n",
            &["more than 1024 MiB of memory"][..],
        ),
        // The fuzzer's second find: a 2.6 GB string from one repetition inside a sum.
        (
            include_str!("../../fuzz/known/rules-oom-5b1b5d2b.rules"),
            &["more than 1024 MiB of memory"][..],
        ),
    ] {
        let h = Harness::new(vec![MockResponse::text("never reached")]);
        write_rules(&h, text);
        let out = exec_within(&h, &["-s", "read-only"], Duration::from_secs(60));
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains("default.rules"), "{err}");
        assert!(why.iter().any(|w| err.contains(w)), "{err}");
        assert!(h.mock.requests().is_empty());
    }
}

/// A good file evaluated in the child decides as before: `rm` is forbidden, and the model
/// is told the rule's justification.
#[test]
fn rules_evaluated_in_the_child_decide_as_before() {
    let h = Harness::new(vec![
        shell("c1", &["rm", "-rf", "x"]),
        MockResponse::text("done"),
    ]);
    write_rules(
        &h,
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no deleting here\")\n",
    );
    let out = exec_within(&h, &["-s", "read-only"], Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let outputs = tool_outputs(&h.mock.requests()[1].body);
    assert!(
        outputs.iter().any(|o| o.contains("no deleting here")),
        "{outputs:?}"
    );
}
