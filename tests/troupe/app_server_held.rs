//! A thread another Troupe process holds, followed by a second app-server: it reads the
//! history and what the holder records, answers the holder's approval (the command runs in
//! the holder), interrupts the holder's turn, is refused what only the holder can do, and
//! takes the thread over once the holder is gone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app_server_support::*;
use serde_json::{json, Value};
use troupe_mock_model::MockResponse;

fn is(method: &'static str) -> impl Fn(&Value) -> bool {
    move |m: &Value| m["method"] == method
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_follows_a_held_thread_answers_its_approval_and_interrupts_it() {
    crate::use_sandbox_helper();
    let harness = harness(vec![
        MockResponse::shell("c1", &["bash", "-lc", "touch approved-by-follower.txt"]),
        MockResponse::text("first turn done"),
        MockResponse::shell("c2", &["bash", "-lc", "sleep 60"]),
        MockResponse::text("taken over"),
    ]);
    let mut holder = start(&harness, Transport::Stdio, &[]).await;
    let holder_pid = holder.child.id().unwrap();
    let mut owner = holder.connect().await;
    owner.initialize().await;
    let thread_id = owner
        .start_thread(
            harness.workdir.path(),
            json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write"}),
        )
        .await;
    let first_turn = owner.start_turn(&thread_id, "make the file").await;
    // The holder asks its own client, which leaves the question open.
    owner
        .until(is("item/commandExecution/requestApproval"))
        .await;

    // A second server, same home: the thread is held, so it is followed.
    let mut other = start(&harness, Transport::Stdio, &[]).await;
    let mut follower = other.connect().await;
    follower.initialize().await;
    let resumed = follower
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    let turns = resumed["thread"]["turns"].as_array().unwrap();
    assert_eq!(turns.last().unwrap()["id"], json!(first_turn), "{resumed}");
    assert_eq!(turns.last().unwrap()["status"], "inProgress", "{resumed}");
    let held = follower.until(is("troupe/thread/held")).await;
    assert_eq!(
        held.last().unwrap()["params"]["heldBy"]["pid"],
        json!(holder_pid)
    );
    // The usage the holder recorded before this server listened is told after the answer.
    let usage = follower
        .until(is("thread/tokenUsage/updated"))
        .await
        .pop()
        .unwrap();
    assert!(
        usage["params"]["tokenUsage"]["total"]["totalTokens"]
            .as_i64()
            .is_some_and(|t| t > 0),
        "{usage}"
    );
    // The approval still open in the holder is asked here too; answered here, it is
    // carried out there.
    let ask = follower
        .until(is("item/commandExecution/requestApproval"))
        .await
        .pop()
        .unwrap();
    assert_eq!(ask["params"]["turnId"], json!(first_turn), "{ask}");
    follower.send(json!({"id": ask["id"], "result": {"decision": "accept"}}));
    let seen = follower.until_turn_completed(&thread_id).await;
    let completed = seen.last().unwrap();
    assert_eq!(
        completed["params"]["turn"]["status"], "completed",
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|m| m["method"] == "item/completed"
            && m["params"]["item"]["type"] == "commandExecution"
            && m["params"]["item"]["status"] == "completed"),
        "{seen:?}"
    );
    assert!(harness
        .workdir
        .path()
        .join("approved-by-follower.txt")
        .exists());
    let there = owner.until_turn_completed(&thread_id).await;
    assert_eq!(
        there.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );

    // Only the holder starts turns; the error names it.
    let refused = follower
        .request_error(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert!(refused.contains(&format!("pid {holder_pid}")), "{refused}");

    // The holder's next turn, its command running (approved by the holder's client), is
    // stopped from the follower.
    let second_turn = owner.start_turn(&thread_id, "wait").await;
    loop {
        let message = owner.next().await;
        if message["method"] == "item/commandExecution/requestApproval" {
            owner.send(json!({"id": message["id"], "result": {"decision": "accept"}}));
        }
        if message["method"] == "item/started"
            && message["params"]["item"]["type"] == "commandExecution"
        {
            break;
        }
    }
    let started = follower.until(is("turn/started")).await;
    assert_eq!(
        started.last().unwrap()["params"]["turn"]["id"],
        json!(second_turn)
    );
    follower
        .request(
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": second_turn}),
        )
        .await;
    let there = owner.until_turn_completed(&thread_id).await;
    assert_eq!(
        there.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );
    let ended = follower.until_turn_completed(&thread_id).await;
    assert_eq!(
        ended.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );

    // The holder dies: the follow ends, and the thread is taken over here.
    holder.child.kill().await.unwrap();
    follower
        .until(|m| {
            m["method"] == "thread/status/changed" && m["params"]["status"]["type"] == "notLoaded"
        })
        .await;
    let taken = follower
        .request("thread/resume", json!({"threadId": thread_id}))
        .await;
    assert_eq!(taken["thread"]["id"], json!(thread_id));
    follower.start_turn(&thread_id, "yours now").await;
    let last = follower.until_turn_completed(&thread_id).await;
    assert_eq!(
        last.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
}
