//! `request_user_input`: Codex 0.169's refusal outside plan mode; in plan mode `exec`
//! answers each question with its recommended option and says so on stderr.

use serde_json::{json, Value};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

fn ask() -> MockResponse {
    let args = json!({"questions": [{
        "id": "color", "header": "Color", "question": "Which color?",
        "options": [
            {"label": "Red (Recommended)", "description": "warm"},
            {"label": "Blue", "description": "cool"}
        ]
    }]});
    MockResponse::tool_calls(vec![("q1", "request_user_input", args.to_string())])
}

fn output_of(body: &Value, call_id: &str) -> String {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == call_id)
        .and_then(|item| item["output"].as_str())
        .unwrap_or_else(|| panic!("no output for {call_id}"))
        .to_string()
}

#[test]
fn outside_plan_mode_the_call_is_refused_as_codex_refuses_it() {
    let h = Harness::new(vec![ask(), MockResponse::text("ok")]);
    let out = h.exec(&["hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        output_of(&h.mock.requests()[1].body, "q1"),
        "request_user_input is unavailable in Default mode"
    );
}

#[test]
fn in_plan_mode_exec_answers_with_the_recommended_option_and_says_so() {
    let h = Harness::new(vec![ask(), MockResponse::text("red it is")]);
    let out = h.exec(&["-c", "collaboration_mode=\"plan\"", "plan it"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let advertised = h.mock.requests()[0].body["tools"].to_string();
    assert!(advertised.contains("request_user_input"));
    let answer: Value = serde_json::from_str(&output_of(&h.mock.requests()[1].body, "q1")).unwrap();
    assert_eq!(
        answer,
        json!({"answers": {"color": {"answers": ["Red (Recommended)"]}}})
    );
    let err = stderr(&out);
    assert!(err.contains("Which color?"), "{err}");
    assert!(err.contains("`Red (Recommended)`"), "{err}");
}

#[test]
fn malformed_questions_get_a_clear_error() {
    let args = json!({"questions": []}).to_string();
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("q1", "request_user_input", args)]),
        MockResponse::text("ok"),
    ]);
    let out = h.exec(&["-c", "collaboration_mode=\"plan\"", "plan it"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = output_of(&h.mock.requests()[1].body, "q1");
    assert!(text.contains("`questions` is empty"), "{text}");
}

/// The app-server asks its client with Codex's `item/tool/requestUserInput` server request,
/// and the client's `{"answers": …}` reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_server_asks_its_client_and_relays_the_answers() {
    use crate::app_server_support::{harness, start, Transport};
    let harness = harness(vec![ask(), MockResponse::text("blue it is")]);
    let config = harness.home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("collaboration_mode = \"plan\"\n{text}")).unwrap();
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access"}),
        )
        .await;
    client.start_turn(&thread_id, "plan it").await;
    let asked = client
        .until(|m| m["method"] == "item/tool/requestUserInput")
        .await;
    let ask = asked.last().unwrap().clone();
    assert_eq!(ask["params"]["threadId"], json!(thread_id));
    assert_eq!(ask["params"]["itemId"], "q1");
    assert_eq!(ask["params"]["questions"][0]["id"], "color");
    assert_eq!(ask["params"]["questions"][0]["options"][1]["label"], "Blue");
    client.send(json!({"id": ask["id"], "result": {"answers": {"color": {"answers": ["Blue"]}}}}));
    client.until_turn_completed(&thread_id).await;
    let answer: Value =
        serde_json::from_str(&output_of(&harness.mock.requests()[1].body, "q1")).unwrap();
    assert_eq!(answer, json!({"answers": {"color": {"answers": ["Blue"]}}}));
}
