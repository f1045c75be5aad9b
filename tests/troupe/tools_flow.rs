//! The tool runtime end to end against the mock model: apply_patch on every path (freeform,
//! JSON, intercepted from `shell` and `exec_command`), the shared/exclusive gate,
//! interactive `exec_command` sessions, `update_plan`, the `apply_patch` arg0 link on the
//! PATH of spawned commands, and `troupe apply`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::Path;
use troupe_mock_model::{events, MockResponse};
use troupe_test_support::{json_lines, stderr, stdout, Harness};

const MULTI_FILE_PATCH: &str = "*** Begin Patch\n*** Add File: new.txt\n+fresh\n\
*** Update File: edit.txt\n@@\n keep\n-old\n+new\n*** Delete File: gone.txt\n*** End Patch";

fn seed(dir: &Path) {
    std::fs::write(dir.join("edit.txt"), "keep\nold\n").unwrap();
    std::fs::write(dir.join("gone.txt"), "bye\n").unwrap();
}

fn assert_patched(dir: &Path) {
    assert_eq!(
        std::fs::read_to_string(dir.join("new.txt")).unwrap(),
        "fresh\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("edit.txt")).unwrap(),
        "keep\nnew\n"
    );
    assert!(!dir.join("gone.txt").exists());
}

const SUMMARY: &str = "Success. Updated the following files:\nA new.txt\nM edit.txt\nD gone.txt\n";

/// Outputs of every tool call (function or custom) in a request body, by call id.
fn outputs(body: &Value) -> Vec<(String, String)> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| {
            item["type"] == "function_call_output" || item["type"] == "custom_tool_call_output"
        })
        .map(|item| {
            (
                item["call_id"].as_str().unwrap_or_default().to_string(),
                item["output"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn items_of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|line| line["item"]["type"] == kind)
        .collect()
}

fn custom_call(call_id: &str, name: &str, input: &str) -> MockResponse {
    MockResponse::sse(vec![
        events::created("resp_custom"),
        events::custom_tool_call_done(call_id, name, input),
        events::completed("resp_custom", 10, 0, 5, 0),
    ])
}

/// `exec --json` with extra config overrides, in the harness's work dir.
fn exec_json(h: &Harness, overrides: &[&str], prompt: &str) -> (Vec<Value>, std::process::Output) {
    let mut args = vec!["--json"];
    for o in overrides {
        args.push("-c");
        args.push(o);
    }
    args.push(prompt);
    let out = h.exec(&args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    (json_lines(&out), out)
}

fn assert_file_change_item(lines: &[Value]) {
    // As Codex: `item.started` (in progress), then `item.completed` of the same item.
    let items = items_of_type(lines, "file_change");
    assert_eq!(items.len(), 2, "{lines:#?}");
    assert_eq!(items[0]["type"], "item.started");
    assert_eq!(items[0]["item"]["status"], "in_progress");
    assert_eq!(items[0]["item"]["id"], items[1]["item"]["id"]);
    let item = &items[1]["item"];
    assert_eq!(items[1]["type"], "item.completed");
    assert_eq!(item["status"], "completed");
    let kinds: Vec<(String, String)> = item["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let path = c["path"].as_str().unwrap();
            let name = Path::new(path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, c["kind"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("new.txt".into(), "add".into()),
            ("edit.txt".into(), "update".into()),
            ("gone.txt".into(), "delete".into())
        ]
    );
}

#[test]
fn multi_file_patch_via_freeform_tool() {
    let h = Harness::new(vec![
        custom_call("p1", "apply_patch", MULTI_FILE_PATCH),
        MockResponse::text("patched"),
    ]);
    seed(h.workdir.path());
    let (lines, _) = exec_json(&h, &[], "edit files");
    assert_patched(h.workdir.path());
    assert_file_change_item(&lines);
    let requests = h.mock.requests();
    let tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "apply_patch")
        .cloned()
        .unwrap();
    assert_eq!(tool["type"], "custom");
    assert_eq!(tool["format"]["syntax"], "lark");
    assert_eq!(
        outputs(&requests[1].body),
        vec![("p1".into(), SUMMARY.into())]
    );
    let kinds: Vec<&str> = requests[1].body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["type"].as_str())
        .collect();
    assert!(kinds.contains(&"custom_tool_call_output"), "{kinds:?}");
}

#[test]
fn multi_file_patch_via_json_function_tool() {
    let args = json!({ "input": MULTI_FILE_PATCH }).to_string();
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("p1", "apply_patch", args)]),
        MockResponse::text("patched"),
    ]);
    seed(h.workdir.path());
    let (lines, _) = exec_json(&h, &["apply_patch_tool_type=\"function\""], "edit files");
    assert_patched(h.workdir.path());
    assert_file_change_item(&lines);
    let requests = h.mock.requests();
    let tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "apply_patch")
        .cloned()
        .unwrap();
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["parameters"]["required"], json!(["input"]));
    assert_eq!(
        outputs(&requests[1].body),
        vec![("p1".into(), SUMMARY.into())]
    );
}

#[test]
fn shell_heredoc_is_intercepted_not_run() {
    let script = format!("apply_patch <<'EOF'\n{MULTI_FILE_PATCH}\nEOF\n");
    let h = Harness::new(vec![
        MockResponse::shell("s1", &["bash", "-lc", &script]),
        MockResponse::text("patched"),
    ]);
    seed(h.workdir.path());
    let (lines, _) = exec_json(&h, &[], "edit files");
    assert_patched(h.workdir.path());
    assert_file_change_item(&lines);
    // Not a command: no command item was shown, and the model got apply_patch's summary.
    assert!(
        items_of_type(&lines, "command_execution").is_empty(),
        "{lines:#?}"
    );
    assert_eq!(
        outputs(&h.mock.requests()[1].body),
        vec![("s1".into(), SUMMARY.into())]
    );
}

#[test]
fn shell_argv_form_is_intercepted() {
    let h = Harness::new(vec![
        MockResponse::shell("s1", &["apply_patch", MULTI_FILE_PATCH]),
        MockResponse::text("patched"),
    ]);
    seed(h.workdir.path());
    let (lines, _) = exec_json(&h, &[], "edit files");
    assert_patched(h.workdir.path());
    assert!(items_of_type(&lines, "command_execution").is_empty());
}

#[test]
fn exec_command_heredoc_is_intercepted_not_run() {
    let cmd = format!("apply_patch <<'EOF'\n{MULTI_FILE_PATCH}\nEOF");
    let args = json!({ "cmd": cmd }).to_string();
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("e1", "exec_command", args)]),
        MockResponse::text("patched"),
    ]);
    seed(h.workdir.path());
    let (lines, _) = exec_json(&h, &["shell_tool_type=\"exec_command\""], "edit files");
    assert_patched(h.workdir.path());
    assert_file_change_item(&lines);
    assert!(
        items_of_type(&lines, "command_execution").is_empty(),
        "{lines:#?}"
    );
    let requests = h.mock.requests();
    let names: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"exec_command") && names.contains(&"write_stdin"),
        "{names:?}"
    );
    assert!(!names.contains(&"shell"), "{names:?}");
    assert_eq!(
        outputs(&requests[1].body),
        vec![("e1".into(), SUMMARY.into())]
    );
}

#[test]
fn failing_patch_changes_nothing_and_tells_the_model() {
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+fresh\n*** Update File: edit.txt\n\
                 @@\n-old\n+new\n*** Update File: missing.txt\n@@\n-x\n+y\n*** End Patch";
    let h = Harness::new(vec![
        custom_call("p1", "apply_patch", patch),
        MockResponse::text("oh well"),
    ]);
    seed(h.workdir.path());
    exec_json(&h, &[], "edit files");
    assert!(!h.workdir.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(h.workdir.path().join("edit.txt")).unwrap(),
        "keep\nold\n"
    );
    let outs = outputs(&h.mock.requests()[1].body);
    assert!(outs[0].1.contains("missing.txt"), "{outs:?}");
}

/// c1 and c2 (shared) each wait until the other has started, so they can only finish if they
/// overlap; c3 (apply_patch, exclusive) appends to the log; c4 (shared) comes after it.
#[test]
fn shared_calls_overlap_and_exclusive_call_runs_alone() {
    let shared = |me: &str, other: &str| {
        format!(
            "echo start-{me} >> log; n=0; until grep -q start-{other} log; do \
             n=$((n+1)); [ $n -gt 200 ] && echo timeout-{me} >> log && exit 1; sleep 0.05; done; \
             sleep 0.2; echo end-{me} >> log"
        )
    };
    let c4 = "echo start-c4 >> log; echo end-c4 >> log".to_string();
    let patch = "*** Begin Patch\n*** Update File: log\n@@\n+patch\n*** End Patch";
    let call = |id: &str, script: &str| {
        events::function_call_done(
            id,
            "shell",
            &json!({"command": ["sh", "-c", script]}).to_string(),
        )
    };
    let h = Harness::new(vec![
        MockResponse::sse(vec![
            events::created("resp_gate"),
            events::with_output_index(call("c1", &shared("c1", "c2")), 0),
            events::with_output_index(call("c2", &shared("c2", "c1")), 1),
            events::with_output_index(events::custom_tool_call_done("c3", "apply_patch", patch), 2),
            events::with_output_index(call("c4", &c4), 3),
            events::completed("resp_gate", 10, 0, 5, 0),
        ]),
        MockResponse::text("done"),
    ]);
    std::fs::write(h.workdir.path().join("log"), "").unwrap();
    exec_json(&h, &[], "go");
    let log = std::fs::read_to_string(h.workdir.path().join("log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 7, "{log}");
    let mut starts = lines[0..2].to_vec();
    starts.sort();
    let mut ends = lines[2..4].to_vec();
    ends.sort();
    assert_eq!(starts, vec!["start-c1", "start-c2"], "{log}");
    assert_eq!(ends, vec!["end-c1", "end-c2"], "{log}");
    assert_eq!(&lines[4..], &["patch", "start-c4", "end-c4"], "{log}");
    // Outputs go back in call order.
    let ids: Vec<String> = outputs(&h.mock.requests()[1].body)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, vec!["c1", "c2", "c3", "c4"]);
}

/// Without `tty`, as in Codex, a command runs on plain pipes: it sees no terminal, its lines
/// end in `\n`, stderr joins stdout, and typing into it is refused with a clear error.
#[test]
fn exec_command_runs_on_pipes_unless_a_tty_is_asked_for() {
    let start = json!({
        "cmd": "if [ -t 1 ]; then echo on-a-tty; else echo on-pipes; fi; echo err-line >&2; sleep 3",
        "login": false,
        "yield_time_ms": 1500
    });
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("e1", "exec_command", start.to_string())]),
        MockResponse::tool_calls(vec![(
            "w1",
            "write_stdin",
            json!({"session_id": 1, "chars": "typed\n"}).to_string(),
        )]),
        MockResponse::tool_calls(vec![(
            "e2",
            "exec_command",
            json!({"cmd": "echo hi", "shell": "/tmp/bash"}).to_string(),
        )]),
        MockResponse::text("done"),
    ]);
    exec_json(&h, &["shell_tool_type=\"exec_command\""], "run it");
    let requests = h.mock.requests();
    let first = &outputs(&requests[1].body)[0].1;
    assert!(first.contains("on-pipes\nerr-line\n"), "{first:?}");
    assert!(!first.contains('\r'), "{first:?}");
    let typed = &outputs(&requests[2].body)[1].1;
    assert!(typed.contains("stdin is closed for this session"), "{typed}");
    let shell = &outputs(&requests[3].body)[2].1;
    assert!(shell.contains("`shell` must be one of"), "{shell}");
}

#[test]
fn interactive_program_through_exec_command_and_write_stdin() {
    let start = json!({
        "cmd": "printf 'name? '; read -r name; echo \"hello-$name\"; read -r again; echo \"bye-$again\"",
        "tty": true,
        // Generous: a loaded 2-core machine has taken 0.7 s just to start bash.
        "yield_time_ms": 3000
    });
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("e1", "exec_command", start.to_string())]),
        MockResponse::tool_calls(vec![(
            "w1",
            "write_stdin",
            json!({"session_id": 1, "chars": "bob\n", "yield_time_ms": 3000}).to_string(),
        )]),
        MockResponse::tool_calls(vec![(
            "w2",
            "write_stdin",
            json!({"session_id": 1, "chars": "now\n", "yield_time_ms": 5000}).to_string(),
        )]),
        MockResponse::tool_calls(vec![(
            "w3",
            "write_stdin",
            json!({"session_id": 1, "chars": "more\n"}).to_string(),
        )]),
        MockResponse::text("talked"),
    ]);
    let (lines, _) = exec_json(&h, &["shell_tool_type=\"exec_command\""], "chat");
    let requests = h.mock.requests();
    let first = &outputs(&requests[1].body)[0].1;
    assert!(
        first.contains("Process running with session ID 1"),
        "{first}"
    );
    assert!(first.contains("name? "), "{first}");
    let second = &outputs(&requests[2].body)[1].1;
    assert!(second.contains("hello-bob"), "{second}");
    assert!(
        second.contains("Process running with session ID 1"),
        "{second}"
    );
    let third = &outputs(&requests[3].body)[2].1;
    assert!(third.contains("bye-now"), "{third}");
    assert!(third.contains("Process exited with code 0"), "{third}");
    // The exit was reported once; the session is gone afterwards.
    let fourth = &outputs(&requests[4].body)[3].1;
    assert!(fourth.contains("there is no running session 1"), "{fourth}");
    let commands = items_of_type(&lines, "command_execution");
    let completed: Vec<&&Value> = commands
        .iter()
        .filter(|line| line["type"] == "item.completed")
        .collect();
    assert_eq!(completed.len(), 1, "{commands:#?}");
    assert_eq!(completed[0]["item"]["exit_code"], 0);
}

#[test]
fn apply_patch_on_path_of_spawned_commands() {
    let patch = "*** Begin Patch\n*** Add File: via-path.txt\n+from arg0\n*** End Patch";
    // Input redirection is not an interceptable form: this really runs `apply_patch`.
    let h = Harness::new(vec![
        MockResponse::shell(
            "s1",
            &[
                "sh",
                "-c",
                "command -v apply_patch; apply_patch < patch.txt",
            ],
        ),
        MockResponse::text("done"),
    ]);
    std::fs::write(h.workdir.path().join("patch.txt"), patch).unwrap();
    exec_json(&h, &[], "use the path");
    assert_eq!(
        std::fs::read_to_string(h.workdir.path().join("via-path.txt")).unwrap(),
        "from arg0\n"
    );
    let outs = outputs(&h.mock.requests()[1].body);
    let output: Value = serde_json::from_str(&outs[0].1).unwrap();
    let text = output["output"].as_str().unwrap();
    assert!(text.contains("troupe-arg0-"), "{text}");
    assert!(
        text.contains("Success. Updated the following files:\nA via-path.txt"),
        "{text}"
    );
    assert_eq!(output["metadata"]["exit_code"], 0);
}

#[test]
fn update_plan_shows_as_todo_list() {
    let plan = |second: &str| {
        json!({"plan": [{"step": "read", "status": "completed"},
                        {"step": "write", "status": second}]})
        .to_string()
    };
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("u1", "update_plan", plan("in_progress"))]),
        MockResponse::tool_calls(vec![("u2", "update_plan", plan("completed"))]),
        MockResponse::text("planned"),
    ]);
    let (lines, _) = exec_json(&h, &[], "plan it");
    let todo = items_of_type(&lines, "todo_list");
    let kinds: Vec<&str> = todo.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        vec!["item.started", "item.updated", "item.completed"]
    );
    assert_eq!(
        todo[0]["item"]["items"],
        json!([{"text": "read", "completed": true}, {"text": "write", "completed": false}])
    );
    assert_eq!(todo[2]["item"]["items"][1]["completed"], true);
    assert_eq!(outputs(&h.mock.requests()[1].body)[0].1, "Plan updated");
}

#[test]
fn troupe_apply_replays_the_last_turn_diff() {
    let h = Harness::new(vec![
        custom_call("p1", "apply_patch", MULTI_FILE_PATCH),
        MockResponse::text("patched"),
    ]);
    seed(h.workdir.path());
    exec_json(&h, &[], "edit files");
    // A second copy of the original tree receives the same changes.
    let other = tempfile::tempdir().unwrap();
    seed(other.path());
    let out = h
        .command()
        .args(["apply", "-C"])
        .arg(other.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_patched(other.path());
    let _ = stdout(&out);
}

/// A session still running when the turn ends is killed with its process group — even a
/// process that ignores the terminal hang-up.
#[test]
fn sessions_die_with_the_turn() {
    let start = json!({
        "cmd": "trap '' HUP; sleep 300 & echo $! > child.pid; echo started; wait",
        "login": false,
        "yield_time_ms": 1000
    });
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("e1", "exec_command", start.to_string())]),
        MockResponse::text("leaving it running"),
    ]);
    exec_json(&h, &["shell_tool_type=\"exec_command\""], "start a server");
    let first = &outputs(&h.mock.requests()[1].body)[0].1;
    assert!(
        first.contains("Process running with session ID 1"),
        "{first}"
    );
    let pid: i32 = std::fs::read_to_string(h.workdir.path().join("child.pid"))
        .unwrap_or_else(|e| panic!("{e}: {first}"))
        .trim()
        .parse()
        .unwrap();
    let alive = |pid: i32| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(pid), "sleep {pid} outlived the turn");
}

#[test]
fn human_output_shows_file_changes_and_the_plan() {
    let plan = json!({"plan": [{"step": "edit", "status": "in_progress"}]}).to_string();
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("u1", "update_plan", plan)]),
        custom_call("p1", "apply_patch", MULTI_FILE_PATCH),
        MockResponse::text("patched"),
    ]);
    seed(h.workdir.path());
    let out = h.exec(&["edit files"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("plan:\n  → edit"), "{err}");
    assert!(err.contains("file update:\nA "), "{err}");
    assert!(err.contains("new.txt\nM "), "{err}");
    assert!(err.contains("gone.txt"), "{err}");
}
