use super::*;

#[test]
fn lines_go_under_sessions_and_unsafe_paths_are_refused() {
    let home = tempfile_dir();
    let mut mirror = RolloutMirror::new(&home);
    mirror
        .append(Some("sessions/2026/12/02/rollout-x.jsonl"), "{\"a\":1}")
        .unwrap();
    mirror
        .append(Some("sessions/2026/12/02/rollout-x.jsonl"), "{\"a\":2}")
        .unwrap();
    let path = home.join("sessions/2026/12/02/rollout-x.jsonl");
    assert_eq!(mirror.path(), Some(path.as_path()));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"a\":1}\n{\"a\":2}\n"
    );
    for bad in [
        "sessions/../config.toml.jsonl",
        "/etc/passwd.jsonl",
        "elsewhere/x.jsonl",
        "sessions/x.txt",
    ] {
        let err = mirror.append(Some(bad), "{}").unwrap_err();
        assert!(
            err.to_string().contains("unsafe rollout path"),
            "{bad}: {err}"
        );
    }
    assert!(mirror.append(None, "{}").is_err());
    let _ = std::fs::remove_dir_all(&home);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("troupe-mirror-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
