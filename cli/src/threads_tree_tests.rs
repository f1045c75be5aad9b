use super::*;
use troupe_messages::threads::ThreadStatus;

/// A stable thread id for a readable name.
fn tid(name: &str) -> ThreadId {
    let n = name.bytes().fold(0u64, |acc, b| {
        acc.wrapping_mul(131).wrapping_add(u64::from(b))
    }) % (1 << 48);
    format!("00000000-0000-7000-8000-{n:012x}").parse().unwrap()
}

fn summary(id: &str, parent: Option<&str>, path: Option<&str>) -> ThreadSummary {
    ThreadSummary {
        id: tid(id),
        title: id.into(),
        cwd: "/w".into(),
        parent: parent.map(tid),
        created_at: String::new(),
        updated_at_ms: 0,
        status: ThreadStatus::Completed,
        rollout_path: Default::default(),
        archived: false,
        turns: 1,
        tokens: Default::default(),
        rollout_bytes: 0,
        task_path: path.map(Into::into),
        depth: path.map_or(0, |p| p.matches('/').count() as u32 - 1),
        nickname: path.map(|_| "Ada".into()),
        model_provider: "openai".into(),
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
        .map(|(d, t)| (d, t.title.as_str()))
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
