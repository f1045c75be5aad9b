//! What Codex's clients rely on beyond the schema's shapes: UUIDv7 turn ids, the thread's
//! Git state, `turn/completed`'s summary view, parsed command actions, a thread held by
//! another process named with how to take it over, and a specific answer for each Codex
//! method Troupe does not implement.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use serde_json::json;
use troupe_mock_model::MockResponse;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_threads_and_commands_carry_codexs_values() {
    crate::use_sandbox_helper();
    let harness = harness(vec![
        MockResponse::shell("c1", &["bash", "-lc", "cat notes.txt | head -n 2"]),
        MockResponse::text("read it"),
    ]);
    let dir = harness.workdir.path();
    std::fs::write(dir.join("notes.txt"), "a\nb\nc\n").unwrap();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "first",
    ]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let started = client
        .request(
            "thread/start",
            json!({"cwd": dir, "sandbox": "workspace-write", "approvalPolicy": "never"}),
        )
        .await;
    let thread = &started["thread"];
    let thread_id = thread["id"].as_str().unwrap().to_string();
    assert_eq!(thread["gitInfo"]["branch"], "main", "{thread}");
    assert_eq!(thread["gitInfo"]["sha"].as_str().map(str::len), Some(40));
    assert_eq!(thread["historyMode"], "legacy");
    assert_eq!(started["serviceTier"], json!(null));

    let turn_id = client.start_turn(&thread_id, "read the notes").await;
    let turn_uuid = uuid::Uuid::parse_str(&turn_id).expect("a UUID turn id");
    assert_eq!(turn_uuid.get_version_num(), 7);
    let seen = client.until_turn_completed(&thread_id).await;
    let command = seen
        .iter()
        .find(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
        })
        .unwrap();
    assert_eq!(
        command["params"]["item"]["commandActions"],
        json!([{"type": "read", "command": "cat notes.txt", "name": "notes.txt", "path": "notes.txt"}])
    );
    // `turn/completed` is Codex's summary view: the final answer only.
    let completed = &seen.last().unwrap()["params"]["turn"];
    assert_eq!(completed["id"], turn_id.as_str());
    assert_eq!(completed["rootTurnId"], turn_id.as_str());
    assert_eq!(completed["itemsView"], "summary");
    assert_eq!(completed["items"].as_array().unwrap().len(), 1);
    assert_eq!(completed["items"][0]["text"], "read it");
    // `thread/read` has every item of the turn, under the same id.
    let read = client
        .request(
            "thread/read",
            json!({"threadId": thread_id, "includeTurns": true}),
        )
        .await;
    let turn = &read["thread"]["turns"][0];
    assert_eq!(turn["id"], turn_id.as_str());
    assert!(turn["items"].as_array().unwrap().len() >= 3, "{turn}");
    // The turn id works where Codex's clients pass it back.
    client
        .request(
            "thread/fork",
            json!({"threadId": thread_id, "lastTurnId": turn_id}),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_another_process_holds_is_followed_and_what_needs_it_names_the_holder() {
    let harness = harness(vec![]);
    let mut holder = start(&harness, Transport::Stdio, &[]).await;
    let mut first = holder.connect().await;
    first.initialize().await;
    let thread_id = first
        .start_thread(harness.workdir.path(), json!({"approvalPolicy": "never"}))
        .await;
    let holder_pid = holder.child.id().unwrap();

    let mut other = start(&harness, Transport::Stdio, &[]).await;
    let mut second = other.connect().await;
    second.initialize().await;
    second
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    let held = second
        .until(|m| m["method"] == "troupe/thread/held")
        .await
        .pop()
        .unwrap();
    assert_eq!(held["params"]["heldBy"]["pid"], json!(holder_pid), "{held}");
    assert!(
        held["params"]["heldBy"]["program"]
            .as_str()
            .unwrap()
            .contains("app-server"),
        "{held}"
    );
    // What needs the thread itself is refused, naming the holder and how to take over.
    let text = json!([{"type": "text", "text": "x"}]);
    for (method, params) in [
        ("turn/start", json!({"threadId": thread_id, "input": text})),
        ("thread/compact/start", json!({"threadId": thread_id})),
        (
            "thread/shellCommand",
            json!({"threadId": thread_id, "command": "true"}),
        ),
    ] {
        let error = second.request_error(method, params).await;
        assert!(
            error.contains(&format!("pid {holder_pid}")),
            "{method}: {error}"
        );
        assert!(error.contains("app-server"), "{method}: {error}");
        assert!(error.contains("stop that process"), "{method}: {error}");
    }
    // Reading it still works.
    second
        .request("thread/read", json!({"threadId": thread_id}))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_methods_troupe_lacks_get_a_specific_answer() {
    let harness = harness(vec![]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let hosted = client.request_error("account/read", json!({})).await;
    assert!(hosted.contains("OpenAI's hosted service"), "{hosted}");
    let windows = client
        .request_error("windowsSandbox/readiness", json!({}))
        .await;
    assert!(windows.contains("Linux"), "{windows}");
    let local = client
        .request_error("thread/delete", json!({"threadId": "x"}))
        .await;
    assert!(
        local.contains("archive it with `thread/archive`"),
        "{local}"
    );
    // A name Codex does not have either keeps Codex's unknown-variant error.
    let unknown = client.request_error("nosuch/method", json!({})).await;
    assert!(unknown.contains("unknown variant"), "{unknown}");
    // `thread/loaded/list` is answered.
    let thread_id = client
        .start_thread(harness.workdir.path(), json!({"approvalPolicy": "never"}))
        .await;
    let loaded = client.request("thread/loaded/list", json!({})).await;
    assert_eq!(loaded["data"], json!([thread_id]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_start_compacts_and_a_refusal_is_codexs_warning() {
    let harness = harness(vec![
        MockResponse::text("one"),
        MockResponse::text("the summary of it all"),
        MockResponse::shell("c1", &["sleep", "30"]),
    ]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(harness.workdir.path(), json!({"approvalPolicy": "never"}))
        .await;
    client.start_turn(&thread_id, "first").await;
    client.until_turn_completed(&thread_id).await;
    let answer = client
        .request("thread/compact/start", json!({"threadId": thread_id}))
        .await;
    assert_eq!(answer, json!({}));
    let seen = client.until(|m| m["method"] == "thread/compacted").await;
    let compacted = &seen.last().unwrap()["params"];
    assert_eq!(compacted["threadId"], thread_id.as_str());
    assert!(uuid::Uuid::parse_str(compacted["turnId"].as_str().unwrap()).is_ok());
    client.until_turn_completed(&thread_id).await;

    // While a turn runs the thread refuses, and says so as Codex's `warning`.
    let turn_id = client.start_turn(&thread_id, "sleep").await;
    client
        .until(|m| {
            m["method"] == "item/started" && m["params"]["item"]["type"] == "commandExecution"
        })
        .await;
    client
        .request("thread/compact/start", json!({"threadId": thread_id}))
        .await;
    let seen = client.until(|m| m["method"] == "warning").await;
    let warning = &seen.last().unwrap()["params"];
    assert_eq!(warning["threadId"], thread_id.as_str());
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("a turn is running"),
        "{warning}"
    );
    client
        .request(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn_id}),
        )
        .await;
    client.until_turn_completed(&thread_id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsubscribe_stops_a_clients_notifications_and_says_what_it_did() {
    let harness = harness(vec![MockResponse::text("for the other client")]);
    let mut server = start(&harness, Transport::Unix, &[]).await;
    let mut first = server.connect().await;
    first.initialize().await;
    let mut second = server.connect().await;
    second.initialize().await;
    let thread_id = first
        .start_thread(harness.workdir.path(), json!({"approvalPolicy": "never"}))
        .await;
    second
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    let unsubscribe = json!({"threadId": thread_id});
    let done = first
        .request("thread/unsubscribe", unsubscribe.clone())
        .await;
    assert_eq!(done, json!({"status": "unsubscribed"}));
    let again = first.request("thread/unsubscribe", unsubscribe).await;
    assert_eq!(again, json!({"status": "notSubscribed"}));
    // The thread goes on for its other client; the first one hears nothing of it.
    second.start_turn(&thread_id, "go").await;
    second.until_turn_completed(&thread_id).await;
    let late = tokio::time::timeout(std::time::Duration::from_millis(300), first.next()).await;
    match late {
        Err(_) => {}
        Ok(message) => assert_ne!(
            message["params"]["threadId"],
            thread_id.as_str(),
            "{message}"
        ),
    }
    let unknown = first
        .request(
            "thread/unsubscribe",
            json!({"threadId": "019ae0f1-2b3c-7d4e-8f50-6a7b8c9d0e1f"}),
        )
        .await;
    assert_eq!(unknown, json!({"status": "notLoaded"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzy_file_search_finds_files_under_the_roots_minus_ignored_ones() {
    let harness = harness(vec![]);
    let root = harness.workdir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("src/main.rs"), "").unwrap();
    std::fs::write(root.join("src/domain.rs"), "").unwrap();
    std::fs::write(root.join("target/main.rs"), "").unwrap();
    std::fs::write(root.join(".hidden_main.rs"), "").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let root_text = root.display().to_string();
    let found = client
        .request(
            "fuzzyFileSearch",
            json!({"query": "main", "roots": [root_text], "cancellationToken": null}),
        )
        .await;
    let files = found["files"].as_array().unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths[0], "src/main.rs", "{found}");
    assert!(paths.contains(&"src/domain.rs"), "{found}");
    assert!(
        !paths
            .iter()
            .any(|p| p.starts_with("target/") || p.starts_with('.')),
        "{found}"
    );
    assert_eq!(files[0]["file_name"], "main.rs");
    assert_eq!(files[0]["match_type"], "file");
    assert_eq!(files[0]["root"], root_text.as_str());
    assert_eq!(files[0]["indices"], json!([4, 5, 6, 7]));
    let error = client
        .request_error(
            "fuzzyFileSearch",
            json!({"query": "x", "roots": ["relative"]}),
        )
        .await;
    assert!(error.contains("not an absolute directory"), "{error}");
}
