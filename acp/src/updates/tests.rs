use super::*;
use std::path::PathBuf;
use troupe_messages::events::ExecOutputStream;

fn exec_begin(call_id: &str, script: &str) -> EventMsg {
    EventMsg::ExecCommandBegin {
        call_id: call_id.into(),
        command: vec!["bash".into(), "-lc".into(), script.into()],
        cwd: PathBuf::from("/w"),
        user_shell: false,
    }
}

#[test]
fn a_command_is_one_tool_call_then_updates() {
    let mut mapper = UpdateMapper::default();
    let begin = mapper.on_event(&exec_begin("c1", "rg foo"));
    assert_eq!(begin[0]["sessionUpdate"], "tool_call");
    assert_eq!(begin[0]["kind"], "search");
    assert_eq!(begin[0]["title"], "rg foo");
    let delta = mapper.on_event(&EventMsg::ExecCommandOutputDelta {
        call_id: "c1".into(),
        stream: ExecOutputStream::Stdout,
        chunk: "a\n".into(),
    });
    assert_eq!(delta[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(delta[0]["content"][0]["content"]["text"], "a\n");
    let end = mapper.on_event(&EventMsg::ExecCommandEnd {
        call_id: "c1".into(),
        command: vec![],
        exit_code: Some(1),
        aggregated_output: "a\nerr\n".into(),
        duration_ms: 5,
        timed_out: false,
        user_shell: false,
    });
    assert_eq!(end[0]["status"], "failed");
    assert_eq!(end[0]["rawOutput"]["exitCode"], 1);
}

#[test]
fn an_approved_command_updates_its_pending_call() {
    let mut mapper = UpdateMapper::default();
    let asked = mapper.on_event(&EventMsg::ExecApprovalRequest {
        call_id: "c1".into(),
        command: vec!["touch".into(), "x".into()],
        cwd: PathBuf::from("/w"),
        reason: None,
        sandbox_retry: None,
    });
    assert_eq!(asked[0]["sessionUpdate"], "tool_call");
    assert_eq!(asked[0]["status"], "pending");
    let begin = mapper.on_event(&exec_begin("c1", "touch x"));
    assert_eq!(begin[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(begin[0]["status"], "in_progress");
}

#[test]
fn kinds_follow_the_program_and_pipelines_execute() {
    let argv = |s: &str| vec!["bash".to_string(), "-lc".to_string(), s.to_string()];
    assert_eq!(command_kind(&argv("cat a.txt")), "read");
    assert_eq!(command_kind(&argv("grep -r x .")), "search");
    assert_eq!(command_kind(&argv("curl https://x")), "fetch");
    assert_eq!(command_kind(&argv("cat a | sh")), "execute");
    assert_eq!(command_kind(&["cargo".into(), "test".into()]), "execute");
}

#[test]
fn streamed_messages_are_not_sent_twice() {
    let mut mapper = UpdateMapper::default();
    let delta = mapper.on_event(&EventMsg::AgentMessageDelta { delta: "hi".into() });
    assert_eq!(delta[0]["sessionUpdate"], "agent_message_chunk");
    assert!(mapper
        .on_event(&EventMsg::AgentMessage {
            message: "hi".into()
        })
        .is_empty());
    // Replayed from a rollout (no deltas): the whole message is the chunk.
    let whole = mapper.on_event(&EventMsg::AgentMessage {
        message: "again".into(),
    });
    assert_eq!(whole[0]["content"]["text"], "again");
    let thought = mapper.on_event(&EventMsg::AgentReasoning { text: "hmm".into() });
    assert_eq!(thought[0]["sessionUpdate"], "agent_thought_chunk");
}

#[test]
fn a_patch_carries_diffs_and_locations() {
    let mut mapper = UpdateMapper::default();
    let changes = vec![
        FileChange {
            path: PathBuf::from("/w/new.txt"),
            kind: FileChangeKind::Add,
            move_path: None,
            diff: "hello\n".into(),
        },
        FileChange {
            path: PathBuf::from("/w/old.txt"),
            kind: FileChangeKind::Update,
            move_path: None,
            diff: "@@ -1,2 +1,2 @@\n keep\n-before\n+after\n".into(),
        },
    ];
    let begin = mapper.on_event(&EventMsg::PatchApplyBegin {
        call_id: "p1".into(),
        changes: changes.clone(),
    });
    assert_eq!(begin[0]["kind"], "edit");
    assert_eq!(begin[0]["locations"][1]["path"], "/w/old.txt");
    assert_eq!(begin[0]["content"][0]["oldText"], Value::Null);
    assert_eq!(begin[0]["content"][0]["newText"], "hello\n");
    assert_eq!(begin[0]["content"][1]["oldText"], "keep\nbefore\n");
    assert_eq!(begin[0]["content"][1]["newText"], "keep\nafter\n");
    let end = mapper.on_event(&EventMsg::PatchApplyEnd {
        call_id: "p1".into(),
        changes,
        success: false,
        output: "no match".into(),
    });
    assert_eq!(end[0]["status"], "failed");
    assert_eq!(end[0]["content"][2]["content"]["text"], "no match");
}

#[test]
fn the_plan_is_sent_whole() {
    let update = plan_update(&[
        PlanItem {
            step: "read".into(),
            status: StepStatus::Completed,
        },
        PlanItem {
            step: "fix".into(),
            status: StepStatus::InProgress,
        },
    ]);
    assert_eq!(update["sessionUpdate"], "plan");
    assert_eq!(update["entries"][1]["status"], "in_progress");
    assert_eq!(update["entries"][0]["content"], "read");
}

#[test]
fn a_sub_agent_is_a_tool_call_titled_with_its_task() {
    let mut mapper = UpdateMapper::default();
    let child = ThreadId::new();
    mapper.on_event(&EventMsg::CollabToolCall {
        call_id: "a1".into(),
        tool: "spawn_agent".into(),
        sender_thread_id: ThreadId::new(),
        receiver_thread_ids: vec![child],
        prompt: Some("count the files".into()),
        agents_states: Default::default(),
        status: troupe_messages::agents::CollabCallStatus::Completed,
    });
    let first = mapper.on_event(&EventMsg::AgentEvent {
        thread_id: child,
        task_path: "/root/a1".into(),
        msg: Box::new(EventMsg::AgentMessage {
            message: "12 files".into(),
        }),
    });
    assert_eq!(first[0]["sessionUpdate"], "tool_call");
    assert_eq!(first[0]["title"], "count the files");
    assert_eq!(first[0]["toolCallId"], agent_call_id(&child));
    assert_eq!(first[1]["content"][0]["content"]["text"], "12 files\n");
    let done = mapper.on_event(&EventMsg::AgentEvent {
        thread_id: child,
        task_path: "/root/a1".into(),
        msg: Box::new(EventMsg::TurnComplete {
            turn_id: troupe_messages::ids::TurnId(1),
            last_agent_message: None,
            usage: Default::default(),
        }),
    });
    assert_eq!(done[0]["status"], "completed");
}

#[test]
fn a_sub_agents_command_is_logged_once_begun_or_only_ended() {
    let mut mapper = UpdateMapper::default();
    let child = ThreadId::new();
    let relay = |msg: EventMsg| EventMsg::AgentEvent {
        thread_id: child,
        task_path: "/root/a1".into(),
        msg: Box::new(msg),
    };
    let end = |call_id: &str, script: &str| EventMsg::ExecCommandEnd {
        call_id: call_id.into(),
        command: vec!["bash".into(), "-lc".into(), script.into()],
        exit_code: Some(0),
        aggregated_output: String::new(),
        duration_ms: 1,
        timed_out: false,
        user_shell: false,
    };
    // Live: the begin is logged, its end adds nothing.
    mapper.on_event(&relay(exec_begin("c1", "echo live")));
    assert!(mapper.on_event(&relay(end("c1", "echo live"))).is_empty());
    // Replayed: begins are not recorded, so the end logs the command.
    let replayed = mapper.on_event(&relay(end("c2", "echo replayed")));
    assert_eq!(
        replayed[0]["content"][0]["content"]["text"],
        "$ echo live\n$ echo replayed\n"
    );
}

#[test]
fn a_sub_agent_whose_events_overtake_its_spawn_gets_its_title_from_the_spawn() {
    let mut mapper = UpdateMapper::default();
    let child = ThreadId::new();
    let first = mapper.on_event(&EventMsg::AgentEvent {
        thread_id: child,
        task_path: "/root/a1".into(),
        msg: Box::new(EventMsg::AgentMessage {
            message: "started".into(),
        }),
    });
    assert_eq!(first[0]["title"], "/root/a1");
    let spawn = mapper.on_event(&EventMsg::CollabToolCall {
        call_id: "a1".into(),
        tool: "spawn_agent".into(),
        sender_thread_id: ThreadId::new(),
        receiver_thread_ids: vec![child],
        prompt: Some("count the files".into()),
        agents_states: Default::default(),
        status: troupe_messages::agents::CollabCallStatus::Completed,
    });
    assert_eq!(spawn.len(), 1, "{spawn:?}");
    assert_eq!(spawn[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(spawn[0]["toolCallId"], agent_call_id(&child));
    assert_eq!(spawn[0]["title"], "count the files");
}
