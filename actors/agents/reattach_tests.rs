use super::reattach::tree_of;
use troupe_messages::agents::AgentStatus;
use troupe_messages::ids::ThreadId;
use troupe_messages::threads::{ThreadStatus, ThreadSummary};
use troupe_messages::usage::TokenUsage;

fn summary(
    id: ThreadId,
    parent: Option<ThreadId>,
    path: Option<&str>,
    status: ThreadStatus,
) -> ThreadSummary {
    ThreadSummary {
        id,
        title: "t".into(),
        cwd: "/w".into(),
        parent,
        created_at: "2026-01-01T00:00:00.000Z".into(),
        updated_at_ms: 1,
        status,
        rollout_path: "/h/x.jsonl".into(),
        archived: false,
        turns: 1,
        tokens: TokenUsage::default(),
        rollout_bytes: 10,
        task_path: path.map(str::to_string),
        depth: path.map_or(0, |p| p.matches('/').count() as u32 - 1),
        nickname: path.map(|_| "nick".to_string()),
        model_provider: "openai".into(),
    }
}

#[test]
fn the_tree_of_a_root_is_its_descendants_with_their_status() {
    let (root, other) = (ThreadId::new(), ThreadId::new());
    let (a, b, grand, stranger, fork) = (
        ThreadId::new(),
        ThreadId::new(),
        ThreadId::new(),
        ThreadId::new(),
        ThreadId::new(),
    );
    let all = vec![
        summary(grand, Some(a), Some("/root/a/g"), ThreadStatus::Interrupted),
        summary(root, None, None, ThreadStatus::Incomplete),
        summary(a, Some(root), Some("/root/a"), ThreadStatus::Incomplete),
        summary(b, Some(root), Some("/root/b"), ThreadStatus::Completed),
        summary(
            stranger,
            Some(other),
            Some("/root/a"),
            ThreadStatus::Running,
        ),
        // A fork of the root is no agent of it.
        summary(fork, Some(root), None, ThreadStatus::Completed),
    ];
    let tree = tree_of(&all, root);
    let paths: Vec<&str> = tree.iter().map(|a| a.task_path.as_str()).collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert_eq!(&paths[2], &"/root/a/g");
    let find = |path: &str| tree.iter().find(|a| a.task_path == path).unwrap();
    assert_eq!(find("/root/a").status, AgentStatus::Failed);
    assert!(find("/root/a")
        .news
        .as_deref()
        .unwrap()
        .contains("stopped before its turn ended (incomplete)"));
    assert_eq!(find("/root/b").status, AgentStatus::Completed);
    assert!(find("/root/b").news.is_none());
    assert_eq!(find("/root/a/g").status, AgentStatus::Interrupted);
    assert_eq!(find("/root/a/g").parent, a);
}
