//! An interrupt keeps what the running command printed: its end (on the app-server's wire and
//! in the rollout) carries the output so far, marked as killed by the stop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::{harness, start, Transport};
use serde_json::{json, Value};
use troupe_mock_model::MockResponse;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_commands_output_so_far_is_kept_on_the_wire_and_in_the_rollout() {
    let harness = harness(vec![MockResponse::shell(
        "ticks",
        &[
            "sh",
            "-c",
            "for i in 1 2 3 4 5 6 7 8; do echo tick-$i; sleep 0.2; done; sleep 60",
        ],
    )]);
    let mut server = start(&harness, Transport::Stdio, &[]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    let thread_id = client
        .start_thread(
            harness.workdir.path(),
            json!({"sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    let turn_id = client.start_turn(&thread_id, "tick").await;
    // Interrupted once the ticks have been streamed, while it sleeps.
    let mut streamed = String::new();
    client
        .until(|m| {
            m["method"] == "item/commandExecution/outputDelta"
                && m["params"]["delta"]
                    .as_str()
                    .unwrap_or("")
                    .contains("tick-8")
        })
        .await
        .iter()
        .filter(|m| m["method"] == "item/commandExecution/outputDelta")
        .for_each(|m| streamed.push_str(m["params"]["delta"].as_str().unwrap_or("")));
    assert!(streamed.contains("tick-1"), "{streamed}");
    client
        .request(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn_id}),
        )
        .await;
    let seen = client.until_turn_completed(&thread_id).await;
    assert_eq!(
        seen.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );
    let ended = seen
        .iter()
        .find(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["type"] == "commandExecution"
        })
        .expect("the command's item completed");
    let output = ended["params"]["item"]["aggregatedOutput"]
        .as_str()
        .unwrap()
        .to_string();
    for i in 1..=8 {
        assert!(output.contains(&format!("tick-{i}")), "{output}");
    }
    assert!(output.ends_with("[process killed: the turn was stopped while it was running]"));
    drop(client);
    drop(server);

    // The rollout's record of its end: the same output.
    let rollout = std::fs::read_to_string(&harness.rollouts()[0]).unwrap();
    let end: Value = rollout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["payload"]["type"] == "exec_command_end")
        .expect("the rollout records the command's end");
    let recorded = end["payload"]["aggregated_output"].as_str().unwrap();
    assert!(
        recorded.contains("tick-1") && recorded.contains("tick-8"),
        "{end}"
    );
}
