//! The runtime's writers of a sub-agent's report and task read back by their reader
//! (`troupe_messages::agent_notice`).

use crate::agents::spawn_request::task_text;
use crate::agents::watcher::notification;
use troupe_messages::agent_notice::{parse_report, task_of_first_message, AgentReport};
use troupe_messages::agents::AgentStatus;
use troupe_messages::ids::ThreadId;

fn id() -> ThreadId {
    "00000000-0000-7000-8000-0000000000c1"
        .parse()
        .unwrap_or_else(|_| unreachable!())
}

#[test]
fn a_report_reads_back_what_the_runtime_wrote() {
    let text = notification(
        "/root/w1",
        "Ada",
        id(),
        AgentStatus::Completed,
        "all good\nmore",
    );
    let report = parse_report(&text);
    assert_eq!(
        report,
        Some(AgentReport {
            path: "/root/w1".into(),
            nickname: "Ada".into(),
            thread_id: id().to_string(),
            status: AgentStatus::Completed,
            answer: "all good\nmore".into(),
        })
    );
    assert_eq!(
        report.map(|r| r.headline()),
        Some("agent /root/w1 (Ada) finished: all good".to_string())
    );
    let failed = notification("/root/w2", "Bo", id(), AgentStatus::Failed, "");
    assert_eq!(
        parse_report(&failed).map(|r| r.headline()),
        Some("agent /root/w2 (Bo) failed".to_string())
    );
}

#[test]
fn a_sub_agents_task_is_its_first_message_without_the_preamble() {
    let text = task_text("/root/a2", "/root", "count the files");
    assert_eq!(task_of_first_message(&text), "count the files");
    assert_eq!(task_of_first_message("plain prompt"), "plain prompt");
}
