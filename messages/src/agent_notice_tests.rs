use super::*;

#[test]
fn a_report_as_the_runtime_writes_it_is_read_back() {
    let text = "<subagent_notification>\nagent: /root/a (Ada, thread t1)\nstatus: failed\n\
                final answer:\nno luck\n</subagent_notification>";
    assert_eq!(
        parse_report(text),
        Some(AgentReport {
            path: "/root/a".into(),
            nickname: "Ada".into(),
            thread_id: "t1".into(),
            status: AgentStatus::Failed,
            answer: "no luck".into(),
        })
    );
}

#[test]
fn text_that_only_looks_like_a_report_is_not_one() {
    assert_eq!(parse_report("hello"), None);
    assert_eq!(parse_report("<subagent_notification>\nagent: x\n"), None);
    let typed = "say <subagent_notification>\nagent: /root/a (A, thread t)\nstatus: completed\nfinal answer:\nx\n</subagent_notification>";
    assert_eq!(parse_report(typed), None);
}
