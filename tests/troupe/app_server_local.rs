//! The app-server's methods that act on this machine outside a turn, through the real
//! binary: `command/exec` (a command in the sandbox the request asks for), the `fs/*` file
//! operations and `thread/turns/list`; each answer validates against Codex's schema. Codex
//! methods Troupe does not offer are refused with their reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use base64::Engine;
use serde_json::{json, Value};
use std::path::PathBuf;
use troupe_mock_model::MockResponse;

/// Checks `result` against Codex's vendored response schema of that name.
fn assert_codex_shape(file: &str, result: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../app-server-protocol/tests/codex-schema/v2")
        .join(file);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("Codex's schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{file}: {errors:?} in {result}");
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_exec_runs_in_the_requested_sandbox_and_answers_codexs_shape() {
    let harness = harness(vec![]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let dir = harness.workdir.path();

    let result = client
        .request(
            "command/exec",
            json!({
                "command": ["sh", "-c", "echo out; echo err >&2; echo \"$GREETING\"; exit 3"],
                "cwd": dir,
                "env": {"GREETING": "hello"},
                "sandboxPolicy": {"type": "readOnly"},
            }),
        )
        .await;
    assert_codex_shape("CommandExecResponse.json", &result);
    assert_eq!(result["exitCode"], 3, "{result}");
    assert_eq!(result["stdout"], "out\nhello\n", "{result}");
    assert_eq!(result["stderr"], "err\n", "{result}");

    // Read-only: the work tree cannot be written.
    let result = client
        .request(
            "command/exec",
            json!({"command": ["touch", "ro.txt"], "cwd": dir,
                   "sandboxPolicy": {"type": "readOnly"}}),
        )
        .await;
    assert_ne!(result["exitCode"], 0, "{result}");
    assert!(!dir.join("ro.txt").exists());

    // Workspace-write: it can.
    let result = client
        .request(
            "command/exec",
            json!({"command": ["touch", "rw.txt"], "cwd": dir,
                   "sandboxPolicy": {"type": "workspaceWrite"}}),
        )
        .await;
    assert_eq!(result["exitCode"], 0, "{result}");
    assert!(dir.join("rw.txt").exists());

    // Its timeout kills it: Codex's exit code 124.
    let result = client
        .request(
            "command/exec",
            json!({"command": ["sleep", "600"], "cwd": dir, "timeoutMs": 300,
                   "sandboxPolicy": {"type": "readOnly"}}),
        )
        .await;
    assert_eq!(result["exitCode"], 124, "{result}");

    // The output cap keeps head and tail of each stream.
    let result = client
        .request(
            "command/exec",
            json!({"command": ["sh", "-c", "seq 1 20000"], "cwd": dir, "outputBytesCap": 1000,
                   "sandboxPolicy": {"type": "readOnly"}}),
        )
        .await;
    let stdout = result["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with("1\n2\n") && stdout.ends_with("20000\n"),
        "{stdout}"
    );
    assert!(stdout.len() < 2000, "{} bytes", stdout.len());

    // What it does not offer is named, never ignored.
    let error = client
        .request_error(
            "command/exec",
            json!({"command": ["true"], "cwd": dir, "tty": true, "processId": "p1"}),
        )
        .await;
    assert!(error.contains("processId, tty not supported"), "{error}");
    let error = client
        .request_error("command/exec", json!({"command": [], "cwd": dir}))
        .await;
    assert!(error.contains("command must not be empty"), "{error}");
    let error = client
        .request_error(
            "command/exec",
            json!({"command": ["true"], "timeoutMs": 5, "disableTimeout": true}),
        )
        .await;
    assert!(error.contains("cannot be combined"), "{error}");
    let error = client
        .request_error("command/exec/terminate", json!({"processId": "p1"}))
        .await;
    assert!(
        error.starts_with("`command/exec/terminate` is not supported by Troupe: Troupe's `command/exec` takes no `processId`"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_methods_do_the_clients_file_operations() {
    let harness = harness(vec![]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let dir = harness.workdir.path().join("fs");
    let file = dir.join("a/b/note.txt");

    let result = client
        .request("fs/createDirectory", json!({"path": dir.join("a/b")}))
        .await;
    assert_codex_shape("FsCreateDirectoryResponse.json", &result);
    let error = client
        .request_error(
            "fs/createDirectory",
            json!({"path": dir.join("x/y"), "recursive": false}),
        )
        .await;
    assert!(
        error.contains("cannot create directory") && error.contains("x/y"),
        "{error}"
    );

    let bytes = b"hello\x00\xffworld";
    let result = client
        .request(
            "fs/writeFile",
            json!({"path": file, "dataBase64": b64(bytes)}),
        )
        .await;
    assert_codex_shape("FsWriteFileResponse.json", &result);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    let result = client.request("fs/readFile", json!({"path": file})).await;
    assert_codex_shape("FsReadFileResponse.json", &result);
    assert_eq!(result["dataBase64"], b64(bytes));

    let result = client
        .request("fs/getMetadata", json!({"path": file}))
        .await;
    assert_codex_shape("FsGetMetadataResponse.json", &result);
    assert_eq!(result["isFile"], true);
    assert_eq!(result["isDirectory"], false);
    assert_eq!(result["isSymlink"], false);
    assert!(result["modifiedAtMs"].as_i64().unwrap() > 0, "{result}");

    std::os::unix::fs::symlink(&file, dir.join("a/link")).unwrap();
    let result = client
        .request("fs/copy", json!({"sourcePath": dir.join("a"), "destinationPath": dir.join("copy"), "recursive": true}))
        .await;
    assert_codex_shape("FsCopyResponse.json", &result);
    assert_eq!(std::fs::read(dir.join("copy/b/note.txt")).unwrap(), bytes);
    assert!(std::fs::symlink_metadata(dir.join("copy/link"))
        .unwrap()
        .file_type()
        .is_symlink());
    let error = client
        .request_error(
            "fs/copy",
            json!({"sourcePath": dir.join("a"), "destinationPath": dir.join("c2")}),
        )
        .await;
    assert!(error.contains("needs `recursive: true`"), "{error}");

    let result = client
        .request("fs/readDirectory", json!({"path": dir.join("a")}))
        .await;
    assert_codex_shape("FsReadDirectoryResponse.json", &result);
    assert_eq!(
        result["entries"],
        json!([
            {"fileName": "b", "isDirectory": true, "isFile": false},
            {"fileName": "link", "isDirectory": false, "isFile": true},
        ])
    );

    let result = client
        .request("fs/remove", json!({"path": dir.join("copy")}))
        .await;
    assert_codex_shape("FsRemoveResponse.json", &result);
    assert!(!dir.join("copy").exists());
    // Missing: fine by default (`force`), an error without it.
    client
        .request("fs/remove", json!({"path": dir.join("copy")}))
        .await;
    let error = client
        .request_error(
            "fs/remove",
            json!({"path": dir.join("copy"), "force": false}),
        )
        .await;
    assert!(
        error.contains("cannot remove") && error.contains("copy"),
        "{error}"
    );
    let error = client
        .request_error("fs/readFile", json!({"path": "relative.txt"}))
        .await;
    assert!(error.contains("`relative.txt` is not absolute"), "{error}");
    let error = client
        .request_error("fs/watch", json!({"path": dir, "watchId": "w"}))
        .await;
    assert!(error.contains("does not watch files"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_turns_list_pages_a_threads_turns() {
    let harness = harness(vec![
        MockResponse::text("first answer"),
        MockResponse::text("second answer"),
        MockResponse::text("third answer"),
    ]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client.start_thread(harness.workdir.path(), json!({})).await;
    let mut turn_ids = Vec::new();
    for text in ["one", "two", "three"] {
        turn_ids.push(client.start_turn(&thread_id, text).await);
        client.until_turn_completed(&thread_id).await;
    }

    // Newest first, summary view, a page of two.
    let page = client
        .request(
            "thread/turns/list",
            json!({"threadId": thread_id, "limit": 2}),
        )
        .await;
    assert_codex_shape("ThreadTurnsListResponse.json", &page);
    let ids: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [turn_ids[2].as_str(), turn_ids[1].as_str()]);
    assert_eq!(page["data"][0]["itemsView"], "summary");
    assert_eq!(page["data"][0]["items"].as_array().unwrap().len(), 1);
    assert_eq!(page["data"][0]["items"][0]["text"], "third answer");

    // The next page: the oldest turn, in full, and no further cursor.
    let next = client
        .request(
            "thread/turns/list",
            json!({"threadId": thread_id, "cursor": page["nextCursor"], "itemsView": "full"}),
        )
        .await;
    assert_codex_shape("ThreadTurnsListResponse.json", &next);
    assert_eq!(next["data"].as_array().unwrap().len(), 1);
    assert_eq!(next["data"][0]["id"], turn_ids[0].as_str());
    assert_eq!(next["data"][0]["itemsView"], "full");
    let types: Vec<&str> = next["data"][0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["userMessage", "agentMessage"]);
    assert_eq!(next["nextCursor"], Value::Null);

    // The backwards cursor, oldest first: the anchor again, then newer turns.
    let back = client
        .request(
            "thread/turns/list",
            json!({"threadId": thread_id, "cursor": page["backwardsCursor"], "sortDirection": "asc", "itemsView": "notLoaded"}),
        )
        .await;
    let ids: Vec<&str> = back["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [turn_ids[2].as_str()]);
    assert_eq!(back["data"][0]["items"], json!([]));

    let error = client
        .request_error(
            "thread/turns/list",
            json!({"threadId": thread_id, "cursor": "bogus"}),
        )
        .await;
    assert!(error.contains("invalid cursor `bogus`"), "{error}");
    let error = client
        .request_error("thread/delete", json!({"threadId": thread_id}))
        .await;
    assert!(error.contains("thread/archive"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_items_list_pages_a_threads_items() {
    let harness = harness(vec![
        MockResponse::text("first answer"),
        MockResponse::text("second answer"),
    ]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client.start_thread(harness.workdir.path(), json!({})).await;
    let mut turn_ids = Vec::new();
    for text in ["one", "two"] {
        turn_ids.push(client.start_turn(&thread_id, text).await);
        client.until_turn_completed(&thread_id).await;
    }
    let texts = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| {
                let item = &entry["item"];
                item["text"]
                    .as_str()
                    .or(item["content"][0]["text"].as_str())
                    .unwrap()
                    .to_string()
            })
            .collect()
    };

    // Across the thread, oldest first, three at a time.
    let page = client
        .request(
            "thread/items/list",
            json!({"threadId": thread_id, "limit": 3}),
        )
        .await;
    assert_codex_shape("ThreadItemsListResponse.json", &page);
    assert_eq!(texts(&page), ["one", "first answer", "two"]);
    assert_eq!(page["data"][0]["turnId"], turn_ids[0].as_str());
    assert_eq!(page["data"][2]["turnId"], turn_ids[1].as_str());
    let next = client
        .request(
            "thread/items/list",
            json!({"threadId": thread_id, "cursor": page["nextCursor"]}),
        )
        .await;
    assert_eq!(texts(&next), ["second answer"]);
    assert_eq!(next["nextCursor"], Value::Null);

    // One turn, newest first, after an item anchor.
    let first_item = page["data"][2]["item"]["id"].clone();
    let turn = client
        .request(
            "thread/items/list",
            json!({"threadId": thread_id, "turnId": turn_ids[1], "sortDirection": "desc"}),
        )
        .await;
    assert_eq!(texts(&turn), ["second answer", "two"]);
    let after = client
        .request(
            "thread/items/list",
            json!({"threadId": thread_id, "turnId": turn_ids[1],
                   "cursor": {"type": "item", "itemId": first_item}}),
        )
        .await;
    assert_eq!(texts(&after), ["second answer"]);

    let error = client
        .request_error(
            "thread/items/list",
            json!({"threadId": thread_id, "deferOutput": {}}),
        )
        .await;
    assert!(error.contains("deferOutput is not supported"), "{error}");
    let error = client
        .request_error(
            "thread/items/list",
            json!({"threadId": thread_id, "cursor": {"type": "item", "itemId": "x"}}),
        )
        .await;
    assert!(error.contains("an item anchor needs `turnId`"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_list_shows_the_skills_a_thread_would_list() {
    let harness = harness(vec![]);
    let skill = |dir: &std::path::Path, name: &str, description: &str| {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nbody\n"),
        )
        .unwrap();
    };
    let user = harness.home.path().join("skills/fmt");
    skill(&user, "fmt", "formats code");
    let repo = harness.workdir.path().join(".agents/skills/deploy");
    skill(&repo, "deploy", "ships it");
    let broken = harness.workdir.path().join(".agents/skills/broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("SKILL.md"), "no front matter\n").unwrap();

    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let result = client
        .request(
            "skills/list",
            json!({"cwds": [harness.workdir.path()], "forceReload": true}),
        )
        .await;
    assert_codex_shape("SkillsListResponse.json", &result);
    let entry = &result["data"][0];
    let skills: Vec<(&str, &str)> = entry["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["scope"].as_str().unwrap()))
        .collect();
    assert_eq!(skills, [("fmt", "user"), ("deploy", "repo")], "{result}");
    assert_eq!(
        entry["skills"][1]["path"],
        repo.join("SKILL.md")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    );
    assert_eq!(entry["errors"].as_array().unwrap().len(), 1, "{result}");
    assert!(
        entry["errors"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("broken/SKILL.md"),
        "{result}"
    );
}
