//! `troupe rewind` end to end: three turns (shell `rm`, `mv`, `chmod`, a write, and
//! `apply_patch`) checkpointed by the sessions; a dry run changes nothing; a file the user
//! edited meanwhile refuses the rewind until `--force`; the rewind restores files, modes and
//! history (the next resume sends the cut history); `--undo` brings it all back; and a
//! sandboxed command can neither read nor change the checkpoint store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, stdout, tool_outputs, Harness};

/// Every path of a tree with its mode and bytes (directories: no bytes).
type Tree = BTreeMap<String, (u32, Option<Vec<u8>>)>;

/// Every path under `dir` with its mode and bytes (directories: no bytes).
fn tree(dir: &Path) -> Tree {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_dir() {
                stack.push(path);
                out.insert(rel, (mode, None));
            } else {
                out.insert(rel, (mode, Some(std::fs::read(&path).unwrap())));
            }
        }
    }
    out
}

fn workspace(h: &Harness) -> PathBuf {
    let ws = std::fs::canonicalize(h.workdir.path()).unwrap().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("a.txt"), "A0\n").unwrap();
    std::fs::write(ws.join("b.txt"), "B0\n").unwrap();
    std::fs::write(ws.join("run.sh"), "echo run\n").unwrap();
    std::fs::set_permissions(ws.join("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(ws.join("sub/c.txt"), "C0\n").unwrap();
    ws
}

fn exec_in(h: &Harness, ws: &Path, sandbox: &str, args: &[&str]) -> Output {
    h.command()
        .current_dir(ws)
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            sandbox,
            "-a",
            "never",
        ])
        .args(["-c", "apply_patch_tool_type=\"function\""])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn troupe(h: &Harness, args: &[&str]) -> Output {
    h.command()
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn ok(output: Output) -> Output {
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    output
}

fn turns(h: &Harness, id: &str) -> u64 {
    let listed = stdout(&ok(troupe(h, &["list", "--json", "--all"])));
    listed
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|t| t["id"] == id)
        .map(|t| t["turns"].as_u64().unwrap())
        .unwrap()
}

fn rollout_bytes(h: &Harness) -> Vec<u8> {
    let rollouts = h.rollouts();
    assert_eq!(rollouts.len(), 1, "{rollouts:?}");
    std::fs::read(&rollouts[0]).unwrap()
}

/// Three turns: shell `rm` + `mv`; shell `chmod` + a write; `apply_patch`.
fn three_turns(h: &Harness, ws: &Path) -> (String, Vec<Tree>) {
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+added by a patch\n*** Update File: a.txt\n@@\n-A2\n+A3\n*** End Patch\n";
    for response in [
        MockResponse::shell("c1", &["sh", "-c", "rm b.txt && mv sub/c.txt sub/d.txt"]),
        MockResponse::text("one"),
        MockResponse::shell(
            "c2",
            &["sh", "-c", "chmod 755 run.sh && printf 'A2\\n' > a.txt"],
        ),
        MockResponse::text("two"),
        MockResponse::tool_calls(vec![(
            "c3".to_string(),
            "apply_patch".to_string(),
            json!({ "input": patch }).to_string(),
        )]),
        MockResponse::text("three"),
    ] {
        h.mock.push(response);
    }
    let mut states = vec![tree(ws)];
    let first = ok(exec_in(
        h,
        ws,
        "danger-full-access",
        &["--json", "turn one"],
    ));
    let id = json_lines(&first)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    states.push(tree(ws));
    ok(exec_in(
        h,
        ws,
        "danger-full-access",
        &["resume", &id, "turn two"],
    ));
    states.push(tree(ws));
    ok(exec_in(
        h,
        ws,
        "danger-full-access",
        &["resume", &id, "turn three"],
    ));
    states.push(tree(ws));
    assert!(!states[1].contains_key("b.txt") && states[1].contains_key("sub/d.txt"));
    assert_eq!(states[2]["run.sh"].0, 0o755);
    assert_eq!(
        states[3]["new.txt"].1.as_deref(),
        Some(&b"added by a patch\n"[..])
    );
    (id, states)
}

#[test]
fn rewind_restores_files_and_history_refuses_outside_edits_and_is_undoable() {
    let h = Harness::new(Vec::new());
    let ws = workspace(&h);
    let (id, states) = three_turns(&h, &ws);
    assert_eq!(turns(&h, &id), 3);

    // A dry run lists what would change and changes nothing.
    let rollout = rollout_bytes(&h);
    let dry = ok(troupe(
        &h,
        &["rewind", &id, "--to-turn", "2", "--both", "--dry-run"],
    ));
    let listed = stdout(&dry);
    assert!(
        listed.contains("new.txt") && listed.contains("a.txt"),
        "{listed}"
    );
    assert_eq!(tree(&ws), states[3]);
    assert_eq!(rollout_bytes(&h), rollout);

    // The user edits a file: the rewind refuses, naming it, and changes nothing.
    std::fs::write(ws.join("a.txt"), "user edit\n").unwrap();
    let refused = troupe(&h, &["rewind", &id, "--to-turn", "2", "--both"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains(&ws.join("a.txt").display().to_string()),
        "{}",
        stderr(&refused)
    );
    assert_eq!(tree(&ws)["a.txt"].1.as_deref(), Some(&b"user edit\n"[..]));
    assert_eq!(rollout_bytes(&h), rollout);
    let edited = tree(&ws);

    // --force: the tree before turn 2 (b.txt gone, c.txt moved, run.sh 0644) and one turn.
    ok(troupe(
        &h,
        &["rewind", &id, "--to-turn", "2", "--both", "--force"],
    ));
    assert_eq!(tree(&ws), states[1]);
    assert_eq!(turns(&h, &id), 1);

    // Undo: the tree as it was (the user's edit included) and three turns again.
    ok(troupe(&h, &["rewind", &id, "--undo"]));
    assert_eq!(tree(&ws), edited);
    assert_eq!(turns(&h, &id), 3);
    assert_eq!(rollout_bytes(&h), rollout);

    // Undo the undo: back before turn 2, without --force (the tree is as the undo left it).
    ok(troupe(&h, &["rewind", &id, "--undo"]));
    assert_eq!(tree(&ws), states[1]);
    assert_eq!(turns(&h, &id), 1);

    // The next resume sends the cut history: turn one, nothing of turns two and three.
    h.mock.push(MockResponse::text("after the rewind"));
    ok(exec_in(
        &h,
        &ws,
        "danger-full-access",
        &["resume", &id, "turn four"],
    ));
    let body = h.mock.requests().last().unwrap().body.to_string();
    assert!(
        body.contains("turn one") && body.contains("turn four"),
        "{body}"
    );
    assert!(
        !body.contains("turn two") && !body.contains("turn three"),
        "{body}"
    );
    assert_eq!(turns(&h, &id), 2);
}

#[test]
fn rewinding_only_the_code_keeps_the_conversation() {
    let h = Harness::new(Vec::new());
    let ws = workspace(&h);
    let (id, states) = three_turns(&h, &ws);
    let rollout = rollout_bytes(&h);
    ok(troupe(&h, &["rewind", &id, "--to-turn", "1", "--code"]));
    assert_eq!(tree(&ws), states[0]);
    assert_eq!(rollout_bytes(&h), rollout);
    ok(troupe(
        &h,
        &["rewind", &id, "--to-turn", "3", "--conversation"],
    ));
    assert_eq!(tree(&ws), states[0]);
    assert_eq!(turns(&h, &id), 2);
}

#[test]
fn a_sandboxed_command_can_neither_read_nor_change_the_checkpoint_store() {
    crate::use_sandbox_helper();
    let h = Harness::new(Vec::new());
    let ws = workspace(&h);
    let store = std::fs::canonicalize(h.home.path())
        .unwrap()
        .join("checkpoints");
    let script = format!(
        "ls -A '{s}/manifests' | wc -l; rm -rf '{s}/manifests' '{s}/objects'; \
         echo planted > '{s}/threads/x.jsonl'; ls '{s}/manifests' | wc -l",
        s = store.display()
    );
    h.mock.push(MockResponse::shell(
        "c1",
        &["sh", "-c", "echo first > a.txt"],
    ));
    h.mock.push(MockResponse::text("one"));
    h.mock
        .push(MockResponse::shell("c2", &["sh", "-c", &script]));
    h.mock.push(MockResponse::text("two"));
    let first = ok(exec_in(&h, &ws, "workspace-write", &["--json", "turn one"]));
    let id = json_lines(&first)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let manifests = |dir: &Path| std::fs::read_dir(dir.join("manifests")).unwrap().count();
    let before = manifests(&store);
    assert!(before > 0);
    ok(exec_in(
        &h,
        &ws,
        "workspace-write",
        &["resume", &id, "turn two"],
    ));
    let output = tool_outputs(&h.mock.requests().last().unwrap().body).join("\n");
    // Inside the sandbox the store is an empty, read-only directory.
    // Inside the sandbox the store is masked: not even listed, let alone changed.
    let denied = format!(
        "ls: cannot access '{}/manifests': Permission denied",
        store.display()
    );
    assert!(output.contains(&denied), "{output}");
    assert!(output.contains("rm: cannot remove"), "{output}");
    assert!(manifests(&store) >= before);
    assert!(!store.join("threads/x.jsonl").exists());
    // And the rewind still works from what the sandbox could not touch.
    ok(troupe(&h, &["rewind", &id, "--to-turn", "1", "--code"]));
    assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), b"A0\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_server_rewinds_a_loaded_thread_after_a_dry_run() {
    use crate::app_server_support::{harness, start, Transport};
    let h = harness(vec![
        MockResponse::shell("c1", &["sh", "-c", "echo one > one.txt"]),
        MockResponse::text("one"),
        MockResponse::shell("c2", &["sh", "-c", "echo two > two.txt && rm a.txt"]),
        MockResponse::text("two"),
    ]);
    let ws = workspace(&h);
    let mut server = start(&h, Transport::Unix, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let id = client
        .start_thread(
            &ws,
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&id, "turn one").await;
    client.until_turn_completed(&id).await;
    let after_one = tree(&ws);
    client.start_turn(&id, "turn two").await;
    client.until_turn_completed(&id).await;
    let after_two = tree(&ws);

    let dry = client
        .request(
            "troupe/thread/rewind",
            json!({"threadId": id, "toTurn": 2, "dryRun": true}),
        )
        .await;
    assert_eq!(tree(&ws), after_two);
    let changes: Vec<String> = dry["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["detail"].as_str().unwrap(),
                c["path"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        changes.contains(&format!("added {}", ws.join("a.txt").display())),
        "{changes:?}"
    );
    assert!(
        changes.contains(&format!("removed {}", ws.join("two.txt").display())),
        "{changes:?}"
    );
    assert_eq!(
        (dry["turnsBefore"].as_u64(), dry["turnsAfter"].as_u64()),
        (Some(2), Some(1))
    );

    let done = client
        .request("troupe/thread/rewind", json!({"threadId": id, "toTurn": 2}))
        .await;
    assert_eq!(done["dryRun"], json!(false));
    assert_eq!(tree(&ws), after_one);
    let undo = client
        .request_error("troupe/thread/rewind", json!({"threadId": id}))
        .await;
    assert!(undo.contains("toTurn"), "{undo}");
    client
        .request(
            "troupe/thread/rewind",
            json!({"threadId": id, "undo": true}),
        )
        .await;
    assert_eq!(tree(&ws), after_two);
}

#[test]
fn with_checkpoints_off_nothing_is_recorded_and_the_code_cannot_be_rewound() {
    let h = Harness::new(Vec::new());
    let ws = workspace(&h);
    h.mock
        .push(MockResponse::shell("c1", &["sh", "-c", "rm a.txt"]));
    h.mock.push(MockResponse::text("one"));
    let first = ok(exec_in(
        &h,
        &ws,
        "danger-full-access",
        &["-c", "checkpoints.enabled=false", "--json", "turn one"],
    ));
    let id = json_lines(&first)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!h.home.path().join("checkpoints").exists());
    let refused = troupe(&h, &["rewind", &id, "--to-turn", "1", "--code"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("no checkpoint"),
        "{}",
        stderr(&refused)
    );
    assert!(!ws.join("a.txt").exists());
}

#[test]
fn rewinding_the_parents_turn_undoes_what_a_child_changed_in_the_same_directory() {
    use crate::subagents_support::{spawn_call, wait_call};
    let h = Harness::new(Vec::new());
    let ws = workspace(&h);
    h.mock.push(MockResponse::shell(
        "c1",
        &["sh", "-c", "echo parent > parent.txt"],
    ));
    h.mock.push(MockResponse::text("one"));
    h.mock.push(MockResponse::tool_calls(vec![spawn_call(
        "s1",
        "helper",
        "child-marker",
        "none",
    )]));
    h.mock.push(wait_call("w1"));
    h.mock.push(MockResponse::text("two"));
    h.mock.route(
        "child-marker",
        vec![
            MockResponse::shell("k1", &["sh", "-c", "echo child > child.txt && rm a.txt"]),
            MockResponse::text("child answer"),
        ],
    );
    let first = ok(exec_in(
        &h,
        &ws,
        "danger-full-access",
        &["--json", "turn one"],
    ));
    let id = json_lines(&first)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();
    let after_one = tree(&ws);
    ok(exec_in(
        &h,
        &ws,
        "danger-full-access",
        &["resume", &id, "turn two"],
    ));
    assert_eq!(std::fs::read(ws.join("child.txt")).unwrap(), b"child\n");
    // The child took checkpoints of its own, in its own thread's index.
    let indexes = std::fs::read_dir(h.home.path().join("checkpoints/threads"))
        .unwrap()
        .count();
    assert_eq!(indexes, 2);
    ok(troupe(&h, &["rewind", &id, "--to-turn", "2", "--code"]));
    assert_eq!(tree(&ws), after_one);
}
