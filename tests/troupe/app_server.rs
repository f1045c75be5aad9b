//! `troupe app-server` end to end: the real binary, the mock model, a client written against
//! Codex's app-server schema, over stdio, a unix socket and WebSocket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use serde_json::{json, Value};
use troupe_mock_model::MockResponse;

fn text_of(message: &Value) -> String {
    message.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_streams_codex_notifications_on_every_transport() {
    for transport in ALL {
        let harness = harness(vec![
            MockResponse::shell("call_1", &["sh", "-c", "echo step-1"]),
            MockResponse::text("done"),
        ]);
        let mut server = start(&harness, transport, &[]).await;
        let mut client = server.connect().await;
        client.initialize().await;
        let started = client
            .request_raw(
                "thread/start",
                json!({"cwd": harness.workdir.path(), "sandbox": "danger-full-access", "approvalPolicy": "never"}),
            )
            .await;
        let result = &started["result"];
        let thread_id = result["thread"]["id"].as_str().expect("id").to_string();
        assert_eq!(
            result["thread"]["status"],
            json!({"type": "idle"}),
            "{started}"
        );
        assert_eq!(result["approvalPolicy"], json!("never"));
        assert_eq!(result["sandbox"], json!({"type": "dangerFullAccess"}));
        // thread/started follows the response.
        let next = client.next().await;
        assert_eq!(next["method"], "thread/started", "{next}");
        assert!(next["emittedAtMs"].is_i64());
        assert!(next.get("jsonrpc").is_none());

        let turn_id = client.start_turn(&thread_id, "run it").await;
        let seen = client.until_turn_completed(&thread_id).await;
        let names = methods(&seen);
        let position = |m: &str| {
            names
                .iter()
                .position(|n| n == m)
                .unwrap_or_else(|| panic!("{m} missing in {names:?} ({transport:?})"))
        };
        assert!(position("thread/status/changed") < position("turn/started"));
        assert!(position("turn/started") < position("item/started"));
        assert!(
            position("item/commandExecution/outputDelta") < position("item/agentMessage/delta")
        );
        assert!(names.contains(&"thread/tokenUsage/updated".to_string()));
        let last = seen.last().expect("turn/completed");
        assert_eq!(last["params"]["turn"]["id"], json!(turn_id));
        assert_eq!(last["params"]["turn"]["status"], "completed");
        let command = seen
            .iter()
            .find(|m| {
                m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
            })
            .expect("command item");
        assert_eq!(command["params"]["item"]["aggregatedOutput"], "step-1\n");
        assert_eq!(command["params"]["item"]["exitCode"], 0);
        assert_eq!(command["params"]["turnId"], json!(turn_id));
        let user = seen
            .iter()
            .find(|m| {
                m["method"] == "item/completed" && m["params"]["item"]["type"] == "userMessage"
            })
            .expect("user item");
        assert_eq!(user["params"]["item"]["content"][0]["text"], "run it");
        let answer = seen
            .iter()
            .find(|m| {
                m["method"] == "item/completed" && m["params"]["item"]["type"] == "agentMessage"
            })
            .expect("agent item");
        assert_eq!(answer["params"]["item"]["text"], "done");
        // The status goes back to idle before turn/completed.
        let idle = seen
            .iter()
            .rposition(|m| m["method"] == "thread/status/changed")
            .expect("idle");
        assert_eq!(seen[idle]["params"]["status"], json!({"type": "idle"}));

        // thread/read gives the same turn back from the rollout.
        let read = client
            .request(
                "thread/read",
                json!({"threadId": thread_id, "includeTurns": true}),
            )
            .await;
        let turns = read["thread"]["turns"].as_array().expect("turns");
        assert_eq!(turns.len(), 1, "{read}");
        assert_eq!(turns[0]["status"], "completed");
        let kinds: Vec<_> = turns[0]["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["type"].clone())
            .collect();
        assert_eq!(
            kinds,
            vec![
                json!("userMessage"),
                json!("commandExecution"),
                json!("agentMessage")
            ],
            "{read}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_codex_errors_and_the_connection_survives() {
    let harness = harness(vec![]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    let before = client.request_error("thread/list", json!({})).await;
    assert_eq!(before, "Not initialized");
    client.initialize().await;
    let again = client
        .request_error(
            "initialize",
            json!({"clientInfo": {"name": "x", "version": "1"}}),
        )
        .await;
    assert_eq!(again, "Already initialized");
    let unknown = client.request_error("nosuch/method", json!({})).await;
    assert!(
        unknown.starts_with("Invalid request: unknown variant `nosuch/method`"),
        "{unknown}"
    );
    let wrong = client
        .request_error("thread/read", json!({"threadId": 123}))
        .await;
    assert!(
        wrong.contains("invalid type: integer `123`, expected a string"),
        "{wrong}"
    );
    let bad_id = client
        .request_error("thread/read", json!({"threadId": "nope"}))
        .await;
    assert!(bad_id.starts_with("invalid thread id"), "{bad_id}");
    let missing = client
        .request_error("turn/start", json!({"threadId": "0194c1a2-7b8c-7d8e-9f00-000000000000", "input": [{"type": "text", "text": "x"}]}))
        .await;
    assert!(missing.contains("thread not found"), "{missing}");
    // Not JSON: no answer (as Codex), and the next request is answered.
    client.send_raw("this is not json");
    client.send_raw(&format!(
        "{{\"id\": 7, \"method\": \"thread/list\", \"params\": {{}}, \"pad\": \"{}\"",
        "x"
    ));
    let listed = client.request("thread/list", json!({})).await;
    assert!(listed["data"].is_array());
    // Answers to approvals nobody asked for.
    client.send(json!({"id": 999, "result": {"decision": "accept"}}));
    let stray = client.response(999).await;
    assert!(
        stray["error"]["message"]
            .as_str()
            .expect("message")
            .contains("unknown or already answered"),
        "{stray}"
    );
    // A 100 MB line is refused without being held, and the connection goes on.
    let huge = format!(
        "{{\"id\": 1, \"method\": \"thread/list\", \"params\": {{\"searchTerm\": \"{}\"}}}}",
        "a".repeat(100 * 1024 * 1024)
    );
    client.send_raw(&huge);
    drop(huge);
    let refused = client
        .until(|m| m.get("error").is_some() && m["id"].is_null())
        .await;
    let refusal = refused.last().expect("refusal");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .expect("message")
            .contains("longer than"),
        "{refusal}"
    );
    let listed = client.request("thread/list", json!({})).await;
    assert!(listed["data"].is_array());
    assert!(
        server.child.try_wait().expect("status").is_none(),
        "the server still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_round_trip_accept_decline_cancel() {
    for transport in ALL {
        let harness = harness(vec![
            MockResponse::shell("call_a", &["touch", "accepted"]),
            MockResponse::shell("call_d", &["touch", "declined"]),
            MockResponse::text("after decline"),
            MockResponse::shell("call_c", &["touch", "cancelled"]),
        ]);
        let mut server = start(&harness, transport, &[]).await;
        let mut client = server.connect().await;
        client.initialize().await;
        let thread_id = client
            .start_thread(
                harness.workdir.path(),
                json!({"sandbox": "danger-full-access", "approvalPolicy": "untrusted"}),
            )
            .await;
        client.start_turn(&thread_id, "touch things").await;
        let asked = client
            .until(|m| m["method"] == "item/commandExecution/requestApproval")
            .await;
        let ask = asked.last().expect("ask").clone();
        assert_eq!(ask["params"]["threadId"], json!(thread_id));
        assert_eq!(ask["params"]["itemId"], "call_a");
        assert!(ask["params"]["command"]
            .as_str()
            .expect("command")
            .contains("touch accepted"));
        assert!(
            asked.iter().any(|m| m["method"] == "thread/status/changed"
                && m["params"]["status"]["activeFlags"] == json!(["waitingOnApproval"])),
            "{asked:?}"
        );
        let request_id = ask["id"].as_i64().expect("server request id");
        client.send(json!({"id": request_id, "result": {"decision": "accept"}}));
        let resolved = client
            .until(|m| m["method"] == "serverRequest/resolved")
            .await;
        assert_eq!(
            resolved.last().expect("resolved")["params"]["requestId"],
            json!(request_id)
        );
        // A second answer to the same request is refused.
        client.send(json!({"id": request_id, "result": {"decision": "accept"}}));
        let twice = client.response(request_id).await;
        assert!(text_of(&twice).contains("already answered"), "{twice}");

        let asked = client
            .until(|m| m["method"] == "item/commandExecution/requestApproval")
            .await;
        let ask = asked.last().expect("ask");
        assert_eq!(ask["params"]["itemId"], "call_d");
        client.send(json!({"id": ask["id"], "result": {"decision": "decline"}}));
        let seen = client.until_turn_completed(&thread_id).await;
        assert_eq!(
            seen.last().expect("end")["params"]["turn"]["status"],
            "completed"
        );
        assert!(
            harness.workdir.path().join("accepted").exists(),
            "{transport:?}"
        );
        assert!(!harness.workdir.path().join("declined").exists());

        client.start_turn(&thread_id, "again").await;
        let asked = client
            .until(|m| m["method"] == "item/commandExecution/requestApproval")
            .await;
        let ask = asked.last().expect("ask");
        client.send(json!({"id": ask["id"], "result": {"decision": "cancel"}}));
        let seen = client.until_turn_completed(&thread_id).await;
        assert_eq!(
            seen.last().expect("end")["params"]["turn"]["status"],
            "interrupted"
        );
        assert!(!harness.workdir.path().join("cancelled").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_reaches_the_model_at_the_next_sampling() {
    for transport in ALL {
        let harness = harness(vec![
            MockResponse::shell("call_1", &["sh", "-c", "sleep 1"]),
            MockResponse::text("steered"),
        ]);
        let mut server = start(&harness, transport, &[]).await;
        let mut client = server.connect().await;
        client.initialize().await;
        let thread_id = client
            .start_thread(
                harness.workdir.path(),
                json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
            )
            .await;
        let turn_id = client.start_turn(&thread_id, "start").await;
        client
            .until(|m| {
                m["method"] == "item/started" && m["params"]["item"]["type"] == "commandExecution"
            })
            .await;
        let wrong = client
            .request_error("turn/steer", json!({"threadId": thread_id, "expectedTurnId": "turn-99", "input": [{"type": "text", "text": "x"}]}))
            .await;
        assert!(wrong.contains("expected turn turn-99"), "{wrong}");
        let steered = client
            .request("turn/steer", json!({"threadId": thread_id, "expectedTurnId": turn_id, "input": [{"type": "text", "text": "STEER-42"}]}))
            .await;
        assert_eq!(steered["turnId"], json!(turn_id));
        let seen = client.until_turn_completed(&thread_id).await;
        assert!(
            seen.iter().any(|m| m["method"] == "item/completed"
                && m["params"]["item"]["content"][0]["text"] == "STEER-42"),
            "{seen:?}"
        );
        let requests = harness.mock.requests();
        assert_eq!(requests.len(), 2);
        assert!(!requests[0].body.to_string().contains("STEER-42"));
        assert!(
            requests[1].body.to_string().contains("STEER-42"),
            "{transport:?}"
        );
    }
}

fn alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_ends_the_turn_and_its_processes() {
    for transport in ALL {
        let harness = harness(vec![MockResponse::shell(
            "call_1",
            &["sh", "-c", "echo $$ > pid; sleep 30"],
        )]);
        let mut server = start(&harness, transport, &[]).await;
        let mut client = server.connect().await;
        client.initialize().await;
        let thread_id = client
            .start_thread(
                harness.workdir.path(),
                json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
            )
            .await;
        let turn_id = client.start_turn(&thread_id, "sleep").await;
        let pid_file = harness.workdir.path().join("pid");
        let mut pid = None;
        for _ in 0..300 {
            if let Some(p) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
            {
                pid = Some(p);
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let pid = pid.expect("the command started");
        assert!(alive(pid));
        let result = client
            .request(
                "turn/interrupt",
                json!({"threadId": thread_id, "turnId": turn_id}),
            )
            .await;
        assert_eq!(result, json!({}));
        let seen = client.until_turn_completed(&thread_id).await;
        assert_eq!(
            seen.last().expect("end")["params"]["turn"]["status"],
            "interrupted"
        );
        assert!(
            !alive(pid),
            "the command outlived its interrupted turn ({transport:?})"
        );
        let again = client
            .request_error(
                "turn/interrupt",
                json!({"threadId": thread_id, "turnId": turn_id}),
            )
            .await;
        assert!(again.contains("is not running"), "{again}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_needs_the_token_and_an_allowed_origin() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let harness = harness(vec![]);
    let server = start(
        &harness,
        Transport::Ws,
        &["--ws-allowed-origin", "https://ok.example"],
    )
    .await;
    let url = format!("ws://{}", server.ws_addr.as_ref().expect("addr"));
    let attempt = |token: Option<&str>, origin: Option<&str>| {
        let mut request = url.clone().into_client_request().expect("request");
        if let Some(token) = token {
            request.headers_mut().insert(
                "authorization",
                format!("Bearer {token}").parse().expect("header"),
            );
        }
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert("origin", origin.parse().expect("header"));
        }
        tokio_tungstenite::connect_async(request)
    };
    let status = |r: Result<_, tokio_tungstenite::tungstenite::Error>| match r {
        Ok(_) => 101,
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("unexpected: {other}"),
    };
    assert_eq!(status(attempt(None, None).await.map(|_| ())), 401);
    assert_eq!(
        status(
            attempt(Some("wrong-token-wrong-token"), None)
                .await
                .map(|_| ())
        ),
        401
    );
    assert_eq!(
        status(
            attempt(Some(TOKEN), Some("https://evil.example"))
                .await
                .map(|_| ())
        ),
        403
    );
    assert_eq!(
        status(
            attempt(Some(TOKEN), Some("https://ok.example"))
                .await
                .map(|_| ())
        ),
        101
    );
    assert_eq!(status(attempt(Some(TOKEN), None).await.map(|_| ())), 101);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_websocket_needs_a_token_and_the_unix_socket_is_private() {
    let harness = harness(vec![]);
    let output = harness
        .command()
        .args(["app-server", "--listen", "ws://0.0.0.0:0"])
        .output()
        .expect("runs");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("without a capability token"),
        "{output:?}"
    );

    let server = start(&harness, Transport::Unix, &[]).await;
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(server.socket.as_ref().expect("socket"))
        .expect("socket exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_list_read_name_fork_archive_unarchive() {
    let harness = harness(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&thread_id, "first question").await;
    client.until_turn_completed(&thread_id).await;
    let other = client.start_thread(harness.workdir.path(), json!({})).await;
    client.start_turn(&other, "second question").await;
    client.until_turn_completed(&other).await;

    let page = client.request("thread/list", json!({"limit": 1})).await;
    assert_eq!(page["data"].as_array().expect("data").len(), 1);
    let cursor = page["nextCursor"].as_str().expect("more").to_string();
    let rest = client
        .request("thread/list", json!({"limit": 1, "cursor": cursor}))
        .await;
    assert_eq!(rest["data"].as_array().expect("data").len(), 1);
    assert!(rest["nextCursor"].is_null());
    let found = client
        .request("thread/list", json!({"searchTerm": "FIRST"}))
        .await;
    assert_eq!(found["data"][0]["id"], json!(thread_id), "{found}");

    client
        .request(
            "thread/name/set",
            json!({"threadId": thread_id, "name": "the first"}),
        )
        .await;
    let read = client
        .request("thread/read", json!({"threadId": thread_id}))
        .await;
    assert_eq!(read["thread"]["name"], "the first");

    let forked = client
        .request("thread/fork", json!({"threadId": thread_id}))
        .await;
    let fork_id = forked["thread"]["id"]
        .as_str()
        .expect("fork id")
        .to_string();
    assert_ne!(fork_id, thread_id);
    assert_eq!(forked["thread"]["forkedFromId"], json!(thread_id));
    assert_eq!(
        forked["thread"]["turns"].as_array().expect("turns").len(),
        1,
        "{forked}"
    );

    client
        .request("thread/archive", json!({"threadId": other}))
        .await;
    let live = client.request("thread/list", json!({})).await;
    assert!(!live["data"]
        .as_array()
        .expect("data")
        .iter()
        .any(|t| t["id"] == json!(other)));
    let archived = client
        .request("thread/list", json!({"archived": true}))
        .await;
    assert!(archived["data"]
        .as_array()
        .expect("data")
        .iter()
        .any(|t| t["id"] == json!(other)));
    let refused = client
        .request_error(
            "turn/start",
            json!({"threadId": other, "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert!(refused.contains("archived"), "{refused}");
    let back = client
        .request("thread/unarchive", json!({"threadId": other}))
        .await;
    assert_eq!(back["thread"]["id"], json!(other));

    let models = client.request("model/list", json!({})).await;
    assert_eq!(models["data"][0]["id"], "mock-model");
    let config = client.request("config/read", json!({})).await;
    assert_eq!(config["config"]["model"], "mock-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_asks_with_file_change_approval_and_streams_its_item() {
    use troupe_mock_model::events;
    let patch = "*** Begin Patch\n*** Add File: added.txt\n+hello\n*** End Patch\n";
    let custom_call = MockResponse::sse(vec![
        events::created("resp_patch"),
        events::custom_tool_call_done("p1", "apply_patch", patch),
        events::completed("resp_patch", 10, 0, 5, 0),
    ]);
    let harness = harness(vec![custom_call, MockResponse::text("patched")]);
    let mut server = start(&harness, Transport::Unix, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "workspace-write", "approvalPolicy": "untrusted"}),
        )
        .await;
    client.start_turn(&thread_id, "patch it").await;
    let asked = client
        .until(|m| m["method"] == "item/fileChange/requestApproval")
        .await;
    let ask = asked.last().expect("ask");
    assert_eq!(ask["params"]["itemId"], "p1");
    assert_eq!(ask["params"]["threadId"], json!(thread_id));
    assert!(!harness.workdir.path().join("added.txt").exists());
    client.send(json!({"id": ask["id"], "result": {"decision": "acceptForSession"}}));
    let seen = client.until_turn_completed(&thread_id).await;
    let item = seen
        .iter()
        .find(|m| m["method"] == "item/completed" && m["params"]["item"]["type"] == "fileChange")
        .expect("fileChange item");
    assert_eq!(item["params"]["item"]["status"], "completed");
    assert_eq!(
        item["params"]["item"]["changes"][0]["kind"],
        json!({"type": "add"})
    );
    assert!(
        seen.iter().any(|m| m["method"] == "turn/diff/updated"),
        "{seen:?}"
    );
    assert!(harness.workdir.path().join("added.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_is_listed_with_its_parent_link_and_nickname() {
    let spawn = (
        "s1".to_string(),
        "spawn_agent".to_string(),
        json!({"task_name": "helper", "message": "child-marker: answer", "fork_turns": "none"})
            .to_string(),
    );
    let wait = (
        "w1".to_string(),
        "wait_agent".to_string(),
        json!({"timeout_ms": 30000}).to_string(),
    );
    let harness = harness(vec![
        MockResponse::tool_calls(vec![spawn]),
        MockResponse::tool_calls(vec![wait]),
        MockResponse::text("root done"),
    ]);
    harness
        .mock
        .route("child-marker", vec![MockResponse::text("child done")]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let root = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    client.start_turn(&root, "split the work").await;
    client.until_turn_completed(&root).await;

    let list = client.request("thread/list", json!({})).await;
    let threads = list["data"].as_array().expect("data");
    let child = threads
        .iter()
        .find(|t| t["id"] != json!(root))
        .unwrap_or_else(|| panic!("no sub-agent listed: {list}"));
    assert_eq!(child["parentThreadId"], json!(root), "{child}");
    assert!(child["forkedFromId"].is_null(), "{child}");
    assert!(child["agentNickname"].is_string(), "{child}");
    let root_entry = threads
        .iter()
        .find(|t| t["id"] == json!(root))
        .expect("root");
    assert!(root_entry["parentThreadId"].is_null(), "{root_entry}");
}
