use super::*;
use crate::rollout_recorder::encode;
use crate::thread_store::test_support::thread_lines;
use troupe_messages::agents::AgentMeta;
use troupe_messages::rollout::RolloutRecord;

/// Writes a thread whose meta names `parent` and, when given, its place in a tree.
fn write(home: &Path, parent: Option<ThreadId>, agent: Option<(&str, u32)>) -> ThreadId {
    let id = ThreadId::new();
    let mut lines = thread_lines(id, 1);
    if let RolloutRecord::SessionMeta(meta) = &mut lines[0].record {
        meta.parent_thread_id = parent;
        meta.agent = agent.map(|(task_path, depth)| AgentMeta {
            root_thread_id: id,
            task_path: task_path.into(),
            depth,
            nickname: "nick".into(),
        });
    }
    let dir = home.join("sessions/2026/01/01");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rollout-2026-01-01T00-00-00-{id}.jsonl"));
    std::fs::write(&path, encode(&lines).unwrap()).unwrap();
    id
}

#[test]
fn a_roots_agents_are_found_from_the_rollouts_meta_lines_parents_first() {
    let home = tempfile::tempdir().unwrap();
    let root = write(home.path(), None, None);
    let other_root = write(home.path(), None, None);
    let child = write(home.path(), Some(root), Some(("/root/a", 1)));
    let grandchild = write(home.path(), Some(child), Some(("/root/a/b", 2)));
    let _strangers_child = write(home.path(), Some(other_root), Some(("/root/x", 1)));
    // A fork names its source as parent but is no agent of its tree.
    let _fork = write(home.path(), Some(root), None);
    // A file that is not a rollout is left out.
    std::fs::write(
        home.path()
            .join("sessions/2026/01/01/rollout-2026-01-01T00-00-00-broken.jsonl"),
        "garbage\n",
    )
    .unwrap();

    let found = agent_rollouts(home.path(), root);
    let ids: Vec<(ThreadId, ThreadId, &str, u32)> = found
        .iter()
        .map(|a| (a.thread_id, a.parent, a.task_path.as_str(), a.depth))
        .collect();
    assert_eq!(
        ids,
        [
            (child, root, "/root/a", 1),
            (grandchild, child, "/root/a/b", 2)
        ]
    );
    let (summaries, unreadable) = agent_summaries(home.path(), root);
    assert!(unreadable.is_empty(), "{unreadable:?}");
    let summarized: Vec<ThreadId> = summaries.iter().map(|s| s.id).collect();
    assert_eq!(summarized, [child, grandchild]);
    assert!(agent_rollouts(home.path(), grandchild).is_empty());
}
