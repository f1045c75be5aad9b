use super::*;
use troupe_messages::threads::ThreadStatus;

fn summary(id: &str, parent: Option<&str>, path: Option<&str>) -> ThreadSummary {
    ThreadSummary {
        id: id.into(),
        title: id.into(),
        cwd: "/w".into(),
        parent: parent.map(Into::into),
        created_at: String::new(),
        updated_at_ms: 0,
        status: ThreadStatus::Completed,
        rollout_path: String::new(),
        archived: false,
        turns: 1,
        tokens: Default::default(),
        rollout_bytes: 0,
        task_path: path.map(Into::into),
        depth: path.map_or(0, |p| p.matches('/').count() as u32 - 1),
        nickname: path.map(|_| "Ada".into()),
    }
}

#[test]
fn children_follow_their_parent_in_path_order() {
    let threads = vec![
        summary("b", Some("root"), Some("/root/b")),
        summary("other", None, None),
        summary("root", None, None),
        summary("a", Some("root"), Some("/root/a")),
        summary("aa", Some("a"), Some("/root/a/x")),
        summary("fork", Some("root"), None),
        summary("orphan", Some("gone"), Some("/root/z")),
    ];
    let order: Vec<(usize, &str)> = tree_order(&threads)
        .into_iter()
        .map(|(d, t)| (d, t.id.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            (0, "other"),
            (0, "root"),
            (1, "a"),
            (2, "aa"),
            (1, "b"),
            (0, "fork"),
            (0, "orphan"),
        ]
    );
    let line = tree_line(2, &threads[4], "base".into());
    assert_eq!(line, "  └ /root/a/x (Ada)  base");
}
