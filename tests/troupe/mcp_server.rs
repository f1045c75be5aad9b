//! `troupe mcp-server` driven by rmcp's client over the real binary's stdio, with the mock
//! model behind it: the tools it lists, a thread started and continued, events streamed as
//! notifications, approvals asked as elicitation requests (or denied when the client has no
//! elicitation support), bad arguments.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use troupe_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientInfo,
    CreateElicitationRequestParams, CreateElicitationResult, ElicitationAction, ErrorData,
    Implementation, LoggingMessageNotificationParam, ProgressNotificationParam,
};
use troupe_mcp::rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use troupe_mcp::rmcp::transport::TokioChildProcess;
use troupe_mcp::rmcp::{ClientHandler, ServiceExt};
use troupe_mock_model::MockResponse;
use troupe_test_support::{troupe_exe, Harness, KEY_VAR};

/// A client that records what the server sends and answers elicitations with `answer`
/// (no elicitation capability at all when `None`).
#[derive(Clone, Default)]
struct TestClient {
    answer: Option<ElicitationAction>,
    asked: Arc<Mutex<Vec<CreateElicitationRequestParams>>>,
    /// The `_meta` of each elicitation request.
    asked_meta: Arc<Mutex<Vec<Value>>>,
    logs: Arc<Mutex<Vec<Value>>>,
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for TestClient {
    async fn create_elicitation(
        &self,
        request: CreateElicitationRequestParams,
        ctx: RequestContext<RoleClient>,
    ) -> Result<CreateElicitationResult, ErrorData> {
        self.asked.lock().unwrap().push(request);
        self.asked_meta
            .lock()
            .unwrap()
            .push(Value::Object(ctx.meta.0));
        Ok(CreateElicitationResult {
            action: self.answer.clone().unwrap(),
            content: None,
        })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params.data);
    }

    fn get_info(&self) -> ClientInfo {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities.elicitation = Some(Default::default());
        }
        ClientInfo {
            meta: None,
            protocol_version: Default::default(),
            capabilities,
            client_info: Implementation {
                name: "troupe-test".into(),
                title: None,
                version: "1".into(),
                icons: None,
                website_url: None,
            },
        }
    }
}

/// Runs the async half of a test (the harness's mock blocks, so it lives outside).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

async fn connect(harness: &Harness, client: TestClient) -> RunningService<RoleClient, TestClient> {
    let mut cmd = tokio::process::Command::new(troupe_exe());
    cmd.arg("mcp-server")
        .env("TROUPE_HOME", harness.home.path())
        .env(KEY_VAR, "test-key")
        .current_dir(harness.workdir.path());
    let transport = TokioChildProcess::new(cmd).unwrap();
    client.serve(transport).await.unwrap()
}

async fn call(
    service: &RunningService<RoleClient, TestClient>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    service
        .call_tool(CallToolRequestParams {
            meta: None,
            name: tool.to_string().into(),
            arguments: arguments.as_object().cloned(),
            task: None,
        })
        .await
        .unwrap()
}

fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[test]
fn a_client_lists_the_tools_starts_a_thread_and_continues_it() {
    let harness = Harness::new(vec![
        MockResponse::text("first answer"),
        MockResponse::text("second answer"),
    ]);
    let client = TestClient::default();
    block_on(async {
        let service = connect(&harness, client.clone()).await;
        let tools = service.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["troupe", "troupe-reply"]);
        let start = serde_json::to_value(&tools[0]).unwrap();
        assert_eq!(
            start["inputSchema"]["properties"]["approval-policy"]["enum"],
            json!(["untrusted", "on-failure", "on-request", "never"])
        );

        let first = call(
            &service,
            "troupe",
            json!({"prompt": "say something", "sandbox": "read-only"}),
        )
        .await;
        assert_ne!(first.is_error, Some(true), "{first:?}");
        assert_eq!(texts(&first), ["first answer"]);
        let structured = first.structured_content.clone().unwrap();
        assert_eq!(structured["content"], "first answer");
        let thread_id = structured["threadId"].as_str().unwrap().to_string();
        // Events came as logging notifications (with the thread) and as progress.
        let logs = client.logs.lock().unwrap().clone();
        assert!(
            logs.iter()
                .any(|l| l["msg"]["type"] == "turn_complete" && l["threadId"] == thread_id.as_str()),
            "{logs:?}"
        );
        assert!(client
            .progress
            .lock()
            .unwrap()
            .iter()
            .any(|m| m == "turn_started"));

        let second = call(
            &service,
            "troupe-reply",
            json!({"threadId": thread_id, "prompt": "and more"}),
        )
        .await;
        assert_eq!(texts(&second), ["second answer"]);
        assert_eq!(
            second.structured_content.unwrap()["threadId"],
            thread_id.as_str()
        );

        let unknown = call(
            &service,
            "troupe-reply",
            json!({"threadId": "no-such-thread", "prompt": "x"}),
        )
        .await;
        assert_eq!(unknown.is_error, Some(true));
        assert!(texts(&unknown)[0].contains("no thread `no-such-thread`"));
        let bad = call(
            &service,
            "troupe",
            json!({"prompt": "x", "sandbox": "wide-open"}),
        )
        .await;
        assert_eq!(bad.is_error, Some(true));
        assert!(
            texts(&bad)[0].contains("invalid arguments for `troupe`"),
            "{bad:?}"
        );
        service.cancel().await.unwrap();
    });
    // The reply continued the same conversation: the model saw the first exchange.
    let requests = harness.mock.requests();
    let history = requests[1].body["input"].to_string();
    assert!(history.contains("say something") && history.contains("first answer"));
    assert!(history.contains("and more"));
}

/// A turn whose one command needs approval under `untrusted`, then a final answer.
fn approval_script(harness_dir: &std::path::Path) -> (Vec<MockResponse>, std::path::PathBuf) {
    let marker = harness_dir.join("approved.txt");
    let argv = ["touch", marker.to_str().unwrap()];
    (
        vec![MockResponse::shell("c1", &argv), MockResponse::text("done")],
        marker,
    )
}

/// What an approval turn gave: the result, what the client was asked (and each request's
/// `_meta`), whether the command ran, and what the model was told about the call.
struct ApprovalRun {
    result: CallToolResult,
    asked: Vec<CreateElicitationRequestParams>,
    meta: Vec<Value>,
    ran: bool,
    told: String,
}

/// Runs the approval turn with a client answering elicitations with `answer` (or not
/// supporting them).
fn approval_turn(answer: Option<ElicitationAction>) -> ApprovalRun {
    let dir = tempfile::tempdir().unwrap();
    let (script, marker) = approval_script(dir.path());
    let harness = Harness::new(script);
    let client = TestClient {
        answer,
        ..TestClient::default()
    };
    let result = block_on(async {
        let service = connect(&harness, client.clone()).await;
        let result = call(
            &service,
            "troupe",
            json!({"prompt": "touch it", "approval-policy": "untrusted",
                   "sandbox": "danger-full-access"}),
        )
        .await;
        service.cancel().await.unwrap();
        result
    });
    let requests = harness.mock.requests();
    let told = troupe_test_support::tool_outputs(&requests[1].body).join("\n");
    let asked = client.asked.lock().unwrap().clone();
    let meta = client.asked_meta.lock().unwrap().clone();
    ApprovalRun {
        result,
        asked,
        meta,
        ran: marker.exists(),
        told,
    }
}

#[test]
fn an_approval_is_asked_as_an_elicitation_and_accepting_runs_the_command() {
    let run = approval_turn(Some(ElicitationAction::Accept));
    assert_eq!(texts(&run.result), ["done"], "{:?}", run.result);
    assert_eq!(run.asked.len(), 1, "{:?}", run.asked);
    assert!(
        run.asked[0].message.contains("touch"),
        "{}",
        run.asked[0].message
    );
    assert_eq!(run.meta[0]["troupe/callId"], "c1", "{}", run.meta[0]);
    assert_eq!(run.meta[0]["troupe/approval"], "exec");
    assert!(run.ran, "the approved command ran");
}

#[test]
fn without_elicitation_support_an_approval_is_denied_with_a_clear_result() {
    let run = approval_turn(None);
    let texts = texts(&run.result);
    assert_eq!(texts[0], "done");
    assert!(
        texts[1].contains("does not support elicitation") && texts[1].contains("touch"),
        "{texts:?}"
    );
    assert!(run.asked.is_empty());
    assert!(!run.ran, "the denied command did not run");
    assert!(
        run.told.contains("rejected"),
        "the model is told: {}",
        run.told
    );
}

#[test]
fn declining_the_elicitation_denies_the_command() {
    let run = approval_turn(Some(ElicitationAction::Decline));
    assert_eq!(texts(&run.result), ["done"]);
    assert_eq!(run.asked.len(), 1);
    assert!(!run.ran);
    assert!(run.told.contains("rejected"), "{}", run.told);
}

/// The npm MCP inspector's CLI (tests/mcp_servers), as a user would point it at Troupe.
#[test]
fn the_mcp_inspector_cli_lists_the_tools_and_runs_a_thread() {
    let harness = Harness::new(vec![MockResponse::text("inspected")]);
    let inspector = crate::mcp_support::npm_server("mcp-inspector");
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(&inspector)
            .arg("--cli")
            .args([
                "-e",
                &format!("TROUPE_HOME={}", harness.home.path().display()),
            ])
            .args(["-e", &format!("{KEY_VAR}=test-key")])
            .arg(troupe_exe())
            .arg("mcp-server")
            .args(extra)
            .current_dir(harness.workdir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let listed = run(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["troupe", "troupe-reply"]);
    let called = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "troupe",
        "--tool-arg",
        "prompt=hello inspector",
    ]);
    assert_eq!(called["content"][0]["text"], "inspected", "{called}");
    assert!(
        called["structuredContent"]["threadId"].is_string(),
        "{called}"
    );
}
